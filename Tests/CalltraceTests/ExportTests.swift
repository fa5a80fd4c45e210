@testable import CalltraceKit
import Foundation
import XCTest

/// The exports on a small synthetic trace (no C compiled), checked the way their readers read them:
/// folded stacks line by line, Chrome's and speedscope's JSON parsed, speedscope's events balanced
/// and in time order.
///   main 0x1000 [0, 100 ms) > { 0x2000 [10, 40 ms) > 0x3000 [15, 25 ms); 0x2000 [50, 90 ms) }
/// plus a mark at 30 ms, on a profile whose instants are the clock's ticks (no process start).
final class ExportTests: XCTestCase {
    private typealias T = SyntheticTrace
    private let ms: UInt64 = 1_000_000

    private func profile() throws -> Profile {
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: FourCalls.payload()),
                        .init(stream: 0, tid: 0, seq: 0, payload: T.mark("ready", tick: 30 * ms))]
        return try syntheticProfile(trace.bytes)
    }

    /// Self time in microseconds per distinct stack: main 100-30-40 = 30 ms, the two 0x2000 calls
    /// share one stack (20 + 40 ms), 0x3000 10 ms.
    func testFoldedStacksCarrySelfTimeInMicroseconds() throws {
        XCTAssertEqual(FoldedExport.text(ViewInput([try profile()])), """
            0x1000 30000
            0x1000;0x2000 60000
            0x1000;0x2000;0x3000 10000

            """)
    }

    func testChromeEventsAreCompleteEventsInMicrosecondsWithMarks() throws {
        let text = ChromeExport.text(ViewInput([try profile()]))
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let events = try XCTUnwrap(document["traceEvents"] as? [[String: Any]])
        let calls = events.filter { $0["ph"] as? String == "X" }
        XCTAssertEqual(calls.map { $0["name"] as? String }, ["0x1000", "0x2000", "0x3000", "0x2000"], "pre-order")
        XCTAssertEqual(calls.map { $0["ts"] as? Double }, [0, 10_000, 15_000, 50_000])
        XCTAssertEqual(calls.map { $0["dur"] as? Double }, [100_000, 30_000, 10_000, 40_000])
        XCTAssertEqual(calls.map { ($0["args"] as? [String: Any])?["cost_ms"] as? Double }, [100, 30, 10, 40])
        XCTAssertTrue(calls.allSatisfy { $0["tid"] as? Int == 4242 && $0["pid"] as? Int == 4242 })
        let marks = events.filter { $0["ph"] as? String == "i" }
        XCTAssertEqual(marks.map { $0["name"] as? String }, ["ready"])
        XCTAssertEqual(marks.first?["ts"] as? Double, 30_000)
        XCTAssertEqual(events.filter { $0["ph"] as? String == "M" }.count, 2, "process and thread names")
    }

    /// Spans as nestable async events: `b` on the thread that began, `e` on the one that ended, an
    /// id each, milestones `n` with the span's id; an unfinished one ends when the trace ended.
    func testChromeSpansAreAsyncEventsWithIdsAndMilestones() throws {
        var profile = try profile()
        let plain = ChromeExport.text(ViewInput([profile]))
        func at(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }
        profile.ended = at(100)
        profile.spans = [
            ProfileSpan(name: "open", extra: "path=a", begin: at(5), end: at(45), beginTid: 4242, endTid: 4243,
                        milestones: [.init(name: "parsed", at: at(10), tid: 4243)]),
            ProfileSpan(name: "open", begin: at(20), end: at(60), beginTid: 4242, endTid: 4242),
            ProfileSpan(name: "request", begin: at(70), end: nil, beginTid: 4243, endTid: nil),
        ]
        let text = ChromeExport.text(ViewInput([profile]))
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let events = try XCTUnwrap(document["traceEvents"] as? [[String: Any]])
        let spans = events.filter { $0["cat"] as? String == "span" }
        func describe(_ event: [String: Any]) -> String {
            "\(event["ph"] as? String ?? "?") \(event["name"] as? String ?? "?") \(event["id"] as? String ?? "?") "
                + "tid \(event["tid"] as? Int ?? -1) ts \(event["ts"] as? Double ?? -1)"
        }
        XCTAssertEqual(spans.map(describe), [
            "b open 0x1 tid 4242 ts 5000.0", "n parsed 0x1 tid 4243 ts 10000.0", "e open 0x1 tid 4243 ts 45000.0",
            "b open 0x2 tid 4242 ts 20000.0", "e open 0x2 tid 4242 ts 60000.0",
            "b request 0x3 tid 4243 ts 70000.0", "e request 0x3 tid 4243 ts 100000.0",
        ])
        let args = spans.map { $0["args"] as? NSDictionary ?? [:] }
        XCTAssertEqual(args[0], ["begin_tid": 4242, "extra": "path=a"] as NSDictionary)
        XCTAssertEqual(args[1], ["span": "open"] as NSDictionary)
        XCTAssertEqual(args[2], ["end_tid": 4243] as NSDictionary)
        XCTAssertEqual(args[6], ["unfinished": true] as NSDictionary)
        XCTAssertTrue(spans.allSatisfy { $0["pid"] as? Int == 4242 })

        profile.spans = []
        XCTAssertEqual(ChromeExport.text(ViewInput([profile])), plain, "without spans, the output is as before")
    }

    func testSpeedscopeEventsOpenAndCloseInTimeOrder() throws {
        let text = SpeedscopeExport.text(ViewInput([try profile()]))
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(document["$schema"] as? String, "https://www.speedscope.app/file-format-schema.json")
        let frames = try XCTUnwrap((document["shared"] as? [String: Any])?["frames"] as? [[String: Any]])
        let profiles = try XCTUnwrap(document["profiles"] as? [[String: Any]])
        XCTAssertEqual(profiles.count, 1)
        XCTAssertEqual(profiles[0]["type"] as? String, "evented")
        XCTAssertEqual(profiles[0]["unit"] as? String, "nanoseconds")
        XCTAssertEqual(profiles[0]["startValue"] as? Int, 0)
        XCTAssertEqual(profiles[0]["endValue"] as? Int, Int(100 * ms))
        let events = try XCTUnwrap(profiles[0]["events"] as? [[String: Any]])
        var open: [Int] = []
        var last = -1
        for event in events {
            let at = try XCTUnwrap(event["at"] as? Int)
            let frame = try XCTUnwrap(event["frame"] as? Int)
            XCTAssertGreaterThanOrEqual(at, last, "in time order")
            last = at
            if event["type"] as? String == "O" { open.append(frame) } else { XCTAssertEqual(open.popLast(), frame, "balanced") }
        }
        XCTAssertEqual(open, [])
        XCTAssertEqual(events.count, 8)
        let named = events.filter { $0["type"] as? String == "O" }.compactMap { frames[$0["frame"] as? Int ?? 0]["name"] as? String }
        XCTAssertEqual(named, ["0x1000", "0x2000", "0x3000", "0x2000"])
    }

    func testExportFormatsAreRegistered() {
        XCTAssertEqual(ViewRegistry.formats(of: .export), ["chrome", "speedscope", "folded", "perfetto", "otlp", "pprof"])
    }
}
