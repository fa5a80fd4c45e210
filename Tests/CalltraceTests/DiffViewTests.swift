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

    // MARK: - Several runs a side: the Mann-Whitney U test

    /// One run of main (0x1000) with load (0x2000) and 0x3000 beneath it, in ms.
    private func run(main: Double, load: Double, other: Double) throws -> Profile {
        try R.profile(R.trace([R.call(0x2000, 1, load), R.call(0x3000, 50, other), R.call(0x1000, 0, main, depth: 0)]))
    }

    /// Five runs a side (p-values from SciPy, as in MannWhitneyTests): main's 20 ms is significant
    /// (every new run slower, p = 0.008); 0x3000's +6.8 ms (+37%), which the fixed share would call a
    /// regression, is not (p = 0.548: its runs vary by 65-80%); load's 0.06 ms is under the floor.
    private func fiveRunsASide() throws -> ViewInput {
        let base = try zip(zip([100, 101, 99, 102, 98], [40, 41, 39, 40.5, 39.5]), [10, 30, 12, 28, 11])
            .map { try run(main: $0.0, load: $0.1, other: $1) }
        let new = try zip(zip([120, 119, 121, 118, 122], [40.2, 39.8, 40.1, 39.9, 40.3]), [20, 40, 5, 35, 25])
            .map { try run(main: $0.0, load: $0.1, other: $1) }
        return ViewInput(new, baseline: base)
    }

    func testSeveralRunsASideAreJudgedByTheMannWhitneyTest() throws {
        var options = ViewOptions()
        options.showUnchanged = true
        let text = DiffTextView.text(try fiveRunsASide(), options: options)
        XCTAssertEqual(text, """
            base: 5 runs of app; new: 5 runs of app; per-run means in ms; Mann-Whitney U test: a change counts at p < 0.05 and over 0.10 ms
              base total    ±   new total    ±     change  change %       p  base calls  new calls   base p90    new p90  function
            regressions
                  100.00   2%      120.00   2%     +20.00    +20.0%   0.008           1          1     102.00     122.00  0x1000
            within noise
                   40.00   3%       40.06   1%      +0.06         ~   1.000           1          1      41.00      40.30  0x2000
                   18.20  65%       25.00  80%      +6.80         ~   0.548           1          1      30.00      40.00  0x3000

            """)
        let comparison = FunctionComparison(base: FunctionStatistics(try fiveRunsASide().baseline),
                                            new: FunctionStatistics(try fiveRunsASide().profiles),
                                            noiseShare: 0.05, noiseFloor: Nanoseconds(100_000))
        XCTAssertEqual(comparison.method, .mannWhitney(alpha: 0.05))
        XCTAssertEqual(try XCTUnwrap(comparison.rows.first { $0.key.name == "0x1000" }?.pValue), 2.0 / 252, accuracy: 1e-12)
        // At alpha 0.005 nothing five runs can show is significant: main is noise too.
        let strict = FunctionComparison(base: FunctionStatistics(try fiveRunsASide().baseline),
                                        new: FunctionStatistics(try fiveRunsASide().profiles),
                                        noiseShare: 0.05, noiseFloor: Nanoseconds(100_000), alpha: 0.005)
        XCTAssertEqual(strict.method, .threshold, "2/252 is not under 0.005: too few runs")
    }

    /// Three runs a side cannot reach p < 0.05 (0.1 at best): the text says so, and the fixed
    /// thresholds decide.
    func testTooFewRunsForAVerdictIsSaid() throws {
        let base = try [100.0, 101, 99].map { try run(main: $0, load: 40, other: 10) }
        let new = try [120.0, 119, 121].map { try run(main: $0, load: 40, other: 10) }
        let text = DiffTextView.text(ViewInput(new, baseline: base))
        XCTAssertEqual(text.split(separator: "\n").prefix(2).map(String.init), [
            "base: 3 runs of app; new: 3 runs of app; per-run means in ms; noise: 5.0% and 0.10 ms",
            "too few runs for a verdict: with 3 and 3 runs no p-value can be under 0.100 (--alpha 0.05), so the noise "
                + "thresholds decided; 4 or more runs a side let the Mann-Whitney U test decide",
        ])
        XCTAssertTrue(text.contains("regressions\n"), text)
        let json = DiffJSONView.text(ViewInput(new, baseline: base))
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], json)
        XCTAssertEqual(document["method"] as? String, "threshold")
        XCTAssertEqual((document["too_few_runs"] as? [String: Any])?["smallest_p_value"] as? Double ?? 0, 0.1, accuracy: 1e-12)
    }

    func testJSONCarriesThePValuesAndSpreads() throws {
        var options = ViewOptions()
        options.showUnchanged = true
        let json = DiffJSONView.text(try fiveRunsASide(), options: options)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], json)
        XCTAssertEqual(document["method"] as? String, "mann-whitney")
        XCTAssertEqual(document["alpha"] as? Double, 0.05)
        let functions = try XCTUnwrap(document["functions"] as? [[String: Any]])
        XCTAssertEqual(functions.map { $0["status"] as? String }, ["regression", "noise", "noise"])
        XCTAssertEqual(functions[0]["p_value"] as? Double ?? 0, 2.0 / 252, accuracy: 1e-12)
        XCTAssertEqual(functions[2]["p_value"] as? Double ?? 0, 0.5476190476, accuracy: 1e-9)
        XCTAssertEqual(functions[0]["base_spread_percent"] as? Double ?? 0, 2, accuracy: 1e-9)
        XCTAssertEqual(functions[2]["new_spread_percent"] as? Double ?? 0, 80, accuracy: 1e-9)
    }

    /// The Markdown table for a pull-request comment: regressions first, significant ones in bold,
    /// a function name with a pipe escaped.
    func testMarkdownTableForAPullRequest() throws {
        let text = DiffMarkdownView.text(try fiveRunsASide())
        XCTAssertEqual(text, """
            **calltrace diff**: base 5 runs of app, new 5 runs of app; Mann-Whitney U test: a change counts at p < 0.05 and over 0.10 ms

            | | function | base (ms) | new (ms) | change | p |
            |---|---|---:|---:|---:|---:|
            | regression | `0x1000` | 100.00 ±2% | 120.00 ±2% | **+20.00 (+20.0%)** | 0.008 |

            2 functions within noise (`--all` lists them).

            """)
        let one = DiffMarkdownView.text(ViewInput([try R.profile(R.new)], baseline: [try R.profile(R.base)]))
        XCTAssertTrue(one.contains("| regression | `0x2000` | 50.00 | 72.00 | **+22.00 (+44.0%)** |\n"), one)
        XCTAssertTrue(one.contains("| new | `0x4000` | 0.00 | 3.00 | **+3.00** |\n"), one)
    }
}
