@testable import CalltraceKit
import Foundation
import XCTest

/// `top`: per-function rows over threads and runs, exact text on small synthetic runs
/// (`SyntheticRuns`), JSON that parses, percentiles by nearest rank against a brute-force count.
final class TopViewTests: XCTestCase {
    typealias R = SyntheticRuns

    func testOneRunTableCountsRecursionOnceInTotal() throws {
        let text = TopTextView.text(ViewInput([try R.profile(R.base)]))
        XCTAssertEqual(text, """
            1 run of app: 6 calls of 4 functions, by total; times in ms
               calls      total       self       mean        p50        p90        p95        p99        max  function
                   1     100.00      29.00     100.00     100.00     100.00     100.00     100.00     100.00  0x1000
                   2      50.00      50.00      25.00      10.00      40.00      40.00      40.00      40.00  0x2000
                   2      20.00      20.00      15.00      10.00      20.00      20.00      20.00      20.00  0x3000
                   1       1.00       1.00       1.00       1.00       1.00       1.00       1.00       1.00  0x5000

            """)
    }

    func testSeveralRunsAddTheDistributionOfTotalsPerRun() throws {
        let text = TopTextView.text(ViewInput([try R.profile(R.base), try R.profile(R.new)]))
        XCTAssertEqual(text, """
            2 runs of app: 11 calls of 5 functions, by total; times in ms
               calls      total       self       mean        p50        p90        p95        p99        max  runs    run p50    run p90    run max  function
                   2     220.00      72.99     110.00     100.00     120.00     120.00     120.00     120.00     2     100.00     120.00     120.00  0x1000
                   4     122.00     122.00      30.50      10.00      62.00      62.00      62.00      62.00     2      50.00      72.00      72.00  0x2000
                   2      20.00      20.00      15.00      10.00      20.00      20.00      20.00      20.00     1      20.00      20.00      20.00  0x3000
                   1       3.00       3.00       3.00       3.00       3.00       3.00       3.00       3.00     1       3.00       3.00       3.00  0x4000
                   2       2.01       2.01       1.01       1.00       1.01       1.01       1.01       1.01     2       1.00       1.01       1.01  0x5000

            """)
    }

    func testSortAndLimit() throws {
        var options = ViewOptions()
        options.sort = .p90
        options.limit = 2
        let text = TopTextView.text(ViewInput([try R.profile(R.base), try R.profile(R.new)]), options: options)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.first, "2 runs of app: 11 calls of 5 functions, by p90; times in ms")
        XCTAssertEqual(lines.dropFirst(2).dropLast().map { $0.split(separator: " ").last.map(String.init) },
                       ["0x1000", "0x2000"], text)
        XCTAssertEqual(lines.last, "(3 more functions; --limit 0 lists all)")
        options.sort = .name
        options.limit = 0
        let byName = TopTextView.text(ViewInput([try R.profile(R.base)]), options: options)
        XCTAssertEqual(byName.split(separator: "\n").dropFirst(2).compactMap { $0.split(separator: " ").last },
                       ["0x1000", "0x2000", "0x3000", "0x5000"])
    }

    func testJSONHasEveryColumn() throws {
        let text = TopJSONView.text(ViewInput([try R.profile(R.base), try R.profile(R.new)]))
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
        XCTAssertEqual(document["runs"] as? Int, 2)
        XCTAssertEqual(document["programs"] as? [String], ["app"])
        XCTAssertEqual(document["calls"] as? Int, 11)
        XCTAssertEqual(document["omitted"] as? Int, 0)
        let functions = try XCTUnwrap(document["functions"] as? [[String: Any]])
        XCTAssertEqual(functions.map { $0["function"] as? String }, ["0x1000", "0x2000", "0x3000", "0x4000", "0x5000"])
        let load = functions[1]
        XCTAssertEqual(load["calls"] as? Int, 4)
        for (key, value) in [("total_ms", 122.0), ("self_ms", 122.0), ("mean_ms", 30.5), ("p50_ms", 10.0),
                             ("p90_ms", 62.0), ("p95_ms", 62.0), ("p99_ms", 62.0), ("max_ms", 62.0),
                             ("run_total_p50_ms", 50.0), ("run_total_p90_ms", 72.0), ("run_total_max_ms", 72.0)] {
            XCTAssertEqual(load[key] as? Double ?? -1, value, accuracy: 1e-9, key)
        }
        XCTAssertEqual(load["runs"] as? Int, 2)
    }

    func testEmptyProfileHasOnlyItsHeading() throws {
        let empty = try R.profile(R.trace([]))
        XCTAssertEqual(TopTextView.text(ViewInput([empty])), "1 run of app: 0 calls of 0 functions, by total; times in ms\n")
        let json = TopJSONView.text(ViewInput([empty]))
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(json.utf8)), json)
    }

    /// Nearest rank: the p-th percentile is the smallest cost with at least p% of the costs at or
    /// under it. Costs with repeats, spread over two threads and two runs.
    func testPercentilesMatchABruteForceCount() throws {
        var random = SystemRandomNumberGenerator()
        var all: [Int64] = []
        var profiles: [Profile] = []
        for run in 0..<2 {
            let count = 37 + run * 100
            var calls: [R.Call] = []
            var start = 0.0
            for _ in 0..<count {
                let duration = Double(Int.random(in: 1...50, using: &random)) / 10
                calls.append(R.call(0x2000, start, duration, depth: 0))
                all.append(Int64((duration * 1e6).rounded()))
                start += duration + 1
            }
            profiles.append(try R.profile(R.trace(calls)))
        }
        let row = try XCTUnwrap(FunctionStatistics(profiles).rows.first)
        XCTAssertEqual(row.calls, all.count)
        for p in [1, 10, 25, 50, 90, 95, 99, 100] {
            let brute = all.filter { candidate in
                all.filter { $0 <= candidate }.count * 100 >= p * all.count
            }.min()
            XCTAssertEqual(row.percentile(p).value, brute, "p\(p) of \(all.sorted())")
        }
        XCTAssertEqual(row.max.value, all.max())
        XCTAssertEqual(row.mean.value, all.reduce(0, +) / Int64(all.count))
        XCTAssertEqual(row.total.value, all.reduce(0, +))
    }

    /// The same function on two threads of one run is one row; its run total adds both threads.
    func testThreadsOfOneRunAddUp() throws {
        var trace = R.trace([R.call(0x2000, 0, 5, depth: 0)])
        var calls = SyntheticTrace.Calls()
        trace.blocks.append(.init(stream: 2, tid: 4243, seq: 0,
                                  payload: calls.call(function: 0x2000, start: 1_000_000, duration: 7_000_000, depth: 0)))
        trace.blocks[0].payload += SyntheticTrace.thread(stream: 2, tid: 4243, name: "worker")
        let statistics = FunctionStatistics([try R.profile(trace)])
        let row = try XCTUnwrap(statistics.rows.first)
        XCTAssertEqual(statistics.rows.count, 1)
        XCTAssertEqual(row.calls, 2)
        XCTAssertEqual(row.runTotals, [12_000_000])
    }

    /// 200,000 calls in well under a second even in a debug build on a busy machine (about 0.1 s
    /// here; a release build does over 10 M calls a second).
    func testStatisticsAreFast() throws {
        var calls: [R.Call] = []
        let count = 200_000
        calls.reserveCapacity(count)
        for index in 0..<count { calls.append(R.call(0x2000 + UInt64(index % 50) * 0x10, Double(index) * 0.01, 0.005, depth: 0)) }
        var trace = R.trace(calls)
        trace.blockSize = 1 << 22
        let profile = try R.profile(trace)
        XCTAssertEqual(profile.callCount, count)
        let started = DispatchTime.now()
        let statistics = FunctionStatistics([profile])
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        XCTAssertEqual(statistics.rows.count, 50)
        XCTAssertLessThan(seconds, 1.0, "\(count) calls took \(seconds) s")
    }

    func testTopNamesTheModuleOnlyWhenANameIsAmbiguous() throws {
        let profile = R.namedProfile([
            (ProfileFunction(name: "init", module: "app"), 3_000_000),
            (ProfileFunction(name: "init", module: "libfoo.so"), 2_000_000),
            (ProfileFunction(name: "run", module: "app"), 1_000_000),
        ])
        let names = TopTextView.text(ViewInput([profile])).split(separator: "\n").dropFirst(2)
            .map { $0.components(separatedBy: "  ").last ?? "" }
        XCTAssertEqual(names, ["init [app]", "init [libfoo.so]", "run"])
    }

    /// The radix sort behind the percentiles, against the standard library's, with negative and
    /// repeated values and bytes that are the same in every value.
    func testRadixSortSortsLikeSort() {
        var random = SystemRandomNumberGenerator()
        for range in [Int64(-1_000)...1_000, 0...Int64(1) << 40, Int64.min...Int64.max, 5_000_000...5_000_255] {
            for count in [0, 1, 511, 512, 5_000] {
                var values = (0..<count).map { _ in Int64.random(in: range, using: &random) }
                let expected = values.sorted()
                RadixSort.sort(&values)
                XCTAssertEqual(values, expected, "\(count) values in \(range)")
            }
        }
    }
}
