import CalltraceKit
import Foundation
import XCTest

/// The runtime finds each call's return-address slot on the stack to tell a normal return from a
/// frame left by longjmp or unwinding: functions with big frames that return normally must never be
/// flagged `(unwound)`.
final class StackSlotTests: XCTestCase {
    func testBigFramesThatReturnNormallyAreNotFlaggedUnwound() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["bigframe.c"], compiler: compiler)
            let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.stdout, "1\n", "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.outline, ["main", "  big_frame", "  huge_frame"], "\(compiler):\n\(trace.tree)")
            XCTAssertTrue(trace.calls.allSatisfy { !$0.unwound && !$0.unfinished }, "\(compiler):\n\(trace.tree)")
        }
    }
}
