@testable import CalltraceKit
import Foundation
import XCTest

/// Golden output of the report views on a small synthetic trace (no C compiled): a chain of calls
/// each taking nearly all of its parent's time, above two siblings.
///   main 100 ms > run 98 ms > loop 96 ms > { a 37 ms, b 40 ms }
final class ReportViewTests: XCTestCase {
    private typealias T = SyntheticTrace
    private let ms: UInt64 = 1_000_000

    private func chainTrace(extra: [[UInt8]] = [], metadata: [UInt8] = []) -> [UInt8] {
        var calls = T.Calls()
        let records = [
            calls.call(function: 0x4000, start: 3 * ms, duration: 37 * ms, depth: 3),
            calls.call(function: 0x5000, start: 50 * ms, duration: 40 * ms, depth: 3),
            calls.call(function: 0x3000, start: 2 * ms, duration: 96 * ms, depth: 2),
            calls.call(function: 0x2000, start: 1 * ms, duration: 98 * ms, depth: 1),
            calls.call(function: 0x1000, start: 0, duration: 100 * ms, depth: 0),
        ] + extra
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: records.flatMap { $0 })]
        if !metadata.isEmpty { trace.blocks.insert(.init(stream: 0, tid: 0, seq: 0, payload: metadata), at: 0) }
        return trace.bytes
    }

    func testTreeShowsEveryCallIndentedUnderItsParent() throws {
        XCTAssertEqual(try viewText(ReportTreeView.self, chainTrace()), """
             0| 100.00 ms|0x1000
             1|  98.00 ms|  0x2000
             2|  96.00 ms|    0x3000
             3|  37.00 ms|      0x4000
             3|  40.00 ms|      0x5000

            """)
    }

    /// On a terminal: the cost red from half of the longest root call, yellow from a tenth, plain
    /// below; the depth column and notes dim. Without colour the same lines, no escapes.
    func testColourMarksCostsByShareOfTheLongestRootCall() throws {
        var calls = T.Calls()
        let records = [
            calls.call(function: 0x2000, start: 1 * ms, duration: 50 * ms, depth: 1),
            calls.call(function: 0x3000, start: 52 * ms, duration: 10 * ms, depth: 1),
            calls.call(function: 0x4000, start: 70 * ms, duration: 9 * ms, depth: 1),
            calls.call(function: 0x1000, start: 0, duration: 100 * ms, depth: 0),
        ]
        var synthetic = T()
        synthetic.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: records.flatMap { $0 })]
        let trace = synthetic.bytes
        var options = ViewOptions()
        options.colour = true
        let dim = "\u{1B}[2m", red = "\u{1B}[1;31m", yellow = "\u{1B}[33m", reset = "\u{1B}[0m"
        XCTAssertEqual(try viewText(ReportTreeView.self, trace, options: options), """
            \(dim) 0|\(reset)\(red) 100.00\(reset) ms|0x1000
            \(dim) 1|\(reset)\(red)  50.00\(reset) ms|  0x2000
            \(dim) 1|\(reset)\(yellow)  10.00\(reset) ms|  0x3000
            \(dim) 1|\(reset)   9.00 ms|  0x4000

            """)
        XCTAssertEqual(try viewText(ReportTreeView.self, trace), """
             0| 100.00 ms|0x1000
             1|  50.00 ms|  0x2000
             1|  10.00 ms|  0x3000
             1|   9.00 ms|  0x4000

            """)
    }

    func testSelfColumnIsTheCostLessTheRecordedChildren() throws {
        var options = ViewOptions()
        options.showSelf = true
        XCTAssertEqual(try viewText(ReportTreeView.self, chainTrace(), options: options), """
             0| 100.00 ms|   2.00 ms|0x1000
             1|  98.00 ms|   2.00 ms|  0x2000
             2|  96.00 ms|  19.00 ms|    0x3000
             3|  37.00 ms|  37.00 ms|      0x4000
             3|  40.00 ms|  40.00 ms|      0x5000

            """)
    }

    func testCollapsePrintsAChainOfOnlyChildrenAsOneLine() throws {
        var options = ViewOptions()
        options.collapse = true
        XCTAssertEqual(try viewText(ReportTreeView.self, chainTrace(), options: options), """
             0| 100.00 ms|0x1000 > 0x2000 > 0x3000
             3|  37.00 ms|  0x4000
             3|  40.00 ms|  0x5000

            """)
        options.showSelf = true
        XCTAssertEqual(try viewText(ReportTreeView.self, chainTrace(), options: options).split(separator: "\n").first,
                       " 0| 100.00 ms|  23.00 ms|0x1000 > 0x2000 > 0x3000", "the chain's self time is its calls' together")
    }

    /// A call with a second child, or whose only child takes less than 95 % of its time, ends a chain;
    /// chains longer than four show their first two calls and their last.
    func testCollapseStopsAtABranchAndShortensLongChains() throws {
        var calls = T.Calls()
        var records: [[UInt8]] = []
        // Six nested calls, each 99 % of its parent, the innermost with a 50 % child.
        let functions: [UInt64] = [0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000]
        records.append(calls.call(function: 0x7000, start: 10 * ms, duration: 40 * ms, depth: 6))
        for (depth, function) in functions.enumerated().reversed() {
            records.append(calls.call(function: function, start: UInt64(depth) * ms / 2,
                                      duration: 100 * ms - UInt64(depth) * ms, depth: Int64(depth)))
        }
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: records.flatMap { $0 })]
        var options = ViewOptions()
        options.collapse = true
        XCTAssertEqual(try viewText(ReportTreeView.self, trace.bytes, options: options), """
             0| 100.00 ms|0x1000 > 0x2000 > ... > 0x6000
             6|  40.00 ms|  0x7000

            """)
    }

    func testJSONLinesCarrySelfTime() throws {
        let lines = try viewText(ReportJSONLView.self, chainTrace()).split(separator: "\n")
        XCTAssertEqual(lines.count, 5)
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(objects.map { $0["function"] as? String }, ["0x4000", "0x5000", "0x3000", "0x2000", "0x1000"])
        XCTAssertEqual(objects.map { $0["self"] as? Double }, [37, 40, 19, 2, 2])
        XCTAssertEqual(objects.map { $0["cost"] as? Double }, [37, 40, 96, 98, 100])
        XCTAssertEqual(objects.map { $0["depth"] as? Int }, [3, 3, 2, 1, 0])
        XCTAssertEqual(objects.map { $0["thread"] as? Int }, Array(repeating: 4242, count: 5))
        XCTAssertTrue(lines[0].hasPrefix("{\"function\":\"0x4000\",\"cost\":37.000000,\"overhead\":0.000000,\"self\":37.000000,"),
                      String(lines[0]))
    }

    func testJSONDocumentNestsTheShownCalls() throws {
        var options = ViewOptions()
        options.minimumCost = Nanoseconds(Int64(97 * ms))  // leaves out loop (96), a and b
        let text = try viewText(ReportJSONView.self, chainTrace(), options: options)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(document["pid"] as? Int, 4242)
        let threads = try XCTUnwrap(document["threads"] as? [[String: Any]])
        XCTAssertEqual(threads.count, 1)
        XCTAssertEqual(threads[0]["main"] as? Bool, true)
        let roots = try XCTUnwrap(threads[0]["calls"] as? [[String: Any]])
        XCTAssertEqual(roots.map { $0["function"] as? String }, ["0x1000"])
        XCTAssertEqual(roots[0]["cost_ms"] as? Double, 100)
        XCTAssertEqual(roots[0]["self_ms"] as? Double, 2)
        let children = try XCTUnwrap(roots[0]["children"] as? [[String: Any]])
        XCTAssertEqual(children.map { $0["function"] as? String }, ["0x2000"])
        XCTAssertEqual((children[0]["children"] as? [Any])?.count, 0)

        let all = try viewText(ReportJSONView.self, chainTrace())
        let loop = try XCTUnwrap(((((try JSONSerialization.jsonObject(with: Data(all.utf8)) as? [String: Any])?["threads"]
            as? [[String: Any]])?[0]["calls"] as? [[String: Any]])?[0]["children"] as? [[String: Any]])?[0]["children"]
            as? [[String: Any]])
        XCTAssertEqual(loop.map { $0["function"] as? String }, ["0x3000"])
        XCTAssertEqual((loop[0]["children"] as? [[String: Any]])?.map { $0["function"] as? String }, ["0x4000", "0x5000"])
    }

    /// A trace recorded with CALLTRACE_FILTER: the JSON document carries the filter after
    /// `muted_functions`, with the text header's line; without one, no `filter` member.
    func testJSONDocumentCarriesTheFilter() throws {
        let filter = T.sized(TraceFormat.Tag.filter, T.string("render,-log_*") + T.varint(3) + T.varint(1))
        let text = try viewText(ReportJSONView.self, chainTrace(metadata: filter))
        XCTAssertTrue(text.contains(#""muted_functions":0,"filter":{"spec":"render,-log_*","excluded_functions":3,"#
                                    + #""included_functions":1,"text":"recorded with CALLTRACE_FILTER=render,-log_*: 3 "#
                                    + #"functions excluded (never timed: their time is their callers'); only the calls "#
                                    + #"inside 1 included function recorded"},"threads":["#), text)
        XCTAssertFalse(try viewText(ReportJSONView.self, chainTrace()).contains("\"filter\""))
    }

    /// Every report format is in the registry, the tree first (the default).
    func testRegistryListsTheReportFormats() {
        XCTAssertEqual(ViewRegistry.formats(of: .report), ["tree", "jsonl", "json"])
        for command in ViewCommand.allCases {
            let formats = ViewRegistry.formats(of: command)
            XCTAssertEqual(Set(formats).count, formats.count, "\(command): formats are unique")
        }
    }

    /// Functions are interned: one entry per function, whatever the number of calls.
    func testFunctionsAreInternedOnce() throws {
        var calls = T.Calls()
        let records = (0..<100).map { calls.call(function: 0x4000, start: UInt64($0) * 10, duration: 5, depth: 1) }
            + [calls.call(function: 0x1000, start: 0, duration: 2000, depth: 0)]
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: records.flatMap { $0 })]
        let profile = try syntheticProfile(trace.bytes)
        XCTAssertEqual(profile.functions.map(\.name), ["0x4000", "0x1000"])
        XCTAssertEqual(profile.threads[0].count, 101)
        XCTAssertEqual(profile.threads[0].selfTime(100), Nanoseconds(2000 - 100 * 5))
    }
}
