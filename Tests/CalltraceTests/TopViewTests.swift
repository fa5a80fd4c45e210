@testable import CalltraceKit
import Foundation
import XCTest

/// `top`: per-function rows over threads and runs, exact text on small synthetic runs, JSON that
/// parses, percentiles by nearest rank against a brute-force count.
final class TopViewTests: XCTestCase {
    typealias R = SyntheticRuns

    func testExplore() throws {
        let base = try R.profile(R.base), new = try R.profile(R.new)
        print(TopTextView.text(ViewInput([base])))
        print(TopTextView.text(ViewInput([base, new])))
        print(TopJSONView.text(ViewInput([base, new])))
        print(DiffTextView.text(ViewInput([new], baseline: [base])))
        var options = ViewOptions()
        options.showUnchanged = true
        print(DiffTextView.text(ViewInput([new], baseline: [base]), options: options))
        print(DiffJSONView.text(ViewInput([new], baseline: [base])))
    }
}
