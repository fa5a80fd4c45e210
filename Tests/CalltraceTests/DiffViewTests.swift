@testable import CalltraceKit
import Foundation
import XCTest

/// `diff`: regressions, improvements, new and gone functions between two sets of runs, with the
/// noise threshold (both the share and the floor must be exceeded).
final class DiffViewTests: XCTestCase {
    typealias R = SyntheticRuns

    func testSectionsInOrderWithNoiseHidden() throws {
        let text = DiffTextView.text(ViewInput([try R.profile(R.new)], baseline: [try R.profile(R.base)]))
        XCTAssertEqual(text, """
            base: 1 run of app; new: 1 run of app; per-run means in ms; noise: 5.0% and 0.10 ms
              base total   new total     change  change %  base calls  new calls   base p90    new p90  function
            regressions
                   50.00       72.00     +22.00    +44.0%           2          2      40.00      62.00  0x2000
                  100.00      120.00     +20.00    +20.0%           1          1     100.00     120.00  0x1000
            new
                    0.00        3.00      +3.00                     0          1       0.00       3.00  0x4000
            gone
                   20.00        0.00     -20.00   -100.0%           2          0      20.00       0.00  0x3000
            (1 function within noise; --all lists it)

            """)
    }

    func testImprovementsComeAfterRegressionsAndAllShowsNoise() throws {
        var options = ViewOptions()
        options.showUnchanged = true
        // Swapped: every regression becomes an improvement, new and gone trade places.
        let text = DiffTextView.text(ViewInput([try R.profile(R.base)], baseline: [try R.profile(R.new)]), options: options)
        XCTAssertEqual(text, """
            base: 1 run of app; new: 1 run of app; per-run means in ms; noise: 5.0% and 0.10 ms
              base total   new total     change  change %  base calls  new calls   base p90    new p90  function
            improvements
                   72.00       50.00     -22.00    -30.6%           2          2      62.00      40.00  0x2000
                  120.00      100.00     -20.00    -16.7%           1          1     120.00     100.00  0x1000
            new
                    0.00       20.00     +20.00                     0          2       0.00      20.00  0x3000
            gone
                    3.00        0.00      -3.00   -100.0%           1          0       3.00       0.00  0x4000
            within noise
                    1.01        1.00      -0.01     -1.0%           1          1       1.01       1.00  0x5000

            """)
    }

    /// A change must exceed both the share and the floor: 20 ms on 100 ms is 20%.
    func testBothThresholdsMustBeExceeded() throws {
        let base = [try R.profile(R.base)], new = [try R.profile(R.new)]
        func changes(share: Double, floorMs: Int64) -> [String: FunctionComparison.Change] {
            let comparison = FunctionComparison(base: FunctionStatistics(base), new: FunctionStatistics(new),
                                                noiseShare: share, noiseFloor: Nanoseconds(floorMs * 1_000_000))
            return Dictionary(uniqueKeysWithValues: comparison.rows.map { ($0.key.name, $0.change) })
        }
        XCTAssertEqual(changes(share: 0.25, floorMs: 0)["0x1000"], .noise, "20% is under a 25% share")
        XCTAssertEqual(changes(share: 0.25, floorMs: 0)["0x2000"], .regression, "44% is over it")
        XCTAssertEqual(changes(share: 0.01, floorMs: 21)["0x1000"], .noise, "20 ms is under a 21 ms floor")
        XCTAssertEqual(changes(share: 0.01, floorMs: 21)["0x2000"], .regression)
        XCTAssertEqual(changes(share: 0.01, floorMs: 5)["0x4000"], .noise, "a new function of 3 ms is under the floor")
        XCTAssertEqual(changes(share: 0.005, floorMs: 0)["0x5000"], .regression, "0.01 ms is 1% of 1 ms")
        XCTAssertEqual(changes(share: 0.01, floorMs: 0)["0x5000"], .noise, "exactly the share is not over it")
    }

    /// Totals and calls are means per run: two base runs of 100 ms and one new run of 120 ms.
    func testSeveralRunsCompareAsMeansPerRun() throws {
        let base = [try R.profile(R.base), try R.profile(R.base)]
        let comparison = FunctionComparison(base: FunctionStatistics(base), new: FunctionStatistics([try R.profile(R.new)]),
                                            noiseShare: 0.05, noiseFloor: Nanoseconds(100_000))
        let main = try XCTUnwrap(comparison.rows.first { $0.key.name == "0x1000" })
        XCTAssertEqual(main.baseTotal, Nanoseconds(100_000_000))
        XCTAssertEqual(main.delta, Nanoseconds(20_000_000))
        XCTAssertEqual(main.deltaPermille, 200)
        let load = try XCTUnwrap(comparison.rows.first { $0.key.name == "0x2000" })
        XCTAssertEqual(load.baseCalls, 2)
    }

    func testJSONParsesWithSignedChanges() throws {
        let text = DiffJSONView.text(ViewInput([try R.profile(R.new)], baseline: [try R.profile(R.base)]))
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
        XCTAssertEqual((document["base"] as? [String: Any])?["runs"] as? Int, 1)
        XCTAssertEqual(document["noise_share"] as? Double, 0.05)
        XCTAssertEqual(document["noise_floor_ms"] as? Double, 0.1)
        XCTAssertEqual(document["hidden"] as? Int, 1)
        let functions = try XCTUnwrap(document["functions"] as? [[String: Any]])
        XCTAssertEqual(functions.map { $0["status"] as? String }, ["regression", "regression", "new", "gone"])
        XCTAssertEqual(functions.map { $0["function"] as? String }, ["0x2000", "0x1000", "0x4000", "0x3000"])
        XCTAssertEqual(functions[0]["change_ms"] as? Double ?? 0, 22, accuracy: 1e-9)
        XCTAssertEqual(functions[0]["change_percent"] as? Double ?? 0, 44, accuracy: 1e-9)
        XCTAssertNil(functions[2]["change_percent"], "no percentage of nothing")
        XCTAssertEqual(functions[3]["change_ms"] as? Double ?? 0, -20, accuracy: 1e-9)
        XCTAssertEqual(functions[3]["new_calls"] as? Int, 0)
    }

    func testNothingChangedSaysSo() throws {
        let text = DiffTextView.text(ViewInput([try R.profile(R.base)], baseline: [try R.profile(R.base)]))
        XCTAssertEqual(text.split(separator: "\n").dropFirst().map(String.init),
                       ["no change beyond noise", "(4 functions within noise; --all lists them)"])
    }
}
