@testable import CalltraceKit
import Foundation
import XCTest

/// Golden output of the timeline and hitches views on small synthetic traces (no C compiled).
/// Ticks are nanoseconds; the process started at 1 ms of the clock, the runtime at 3 ms, main at
/// 10 ms, the end at 110 ms.
final class TimelineViewTests: XCTestCase {
    private typealias T = SyntheticTrace
    private let ms: UInt64 = 1_000_000

    /// A constructor `0x1100` (3.5-5.5 ms, with a child 0x1200 of 1.8 ms); main `0x1000` (10-109 ms)
    /// with `0x2000` (12-40 ms, with a child `0x2100`) and `0x3000` (60-100 ms). Marks and frames
    /// are given as instants (since the process's start, 1 ms of the clock) and written as MARK and
    /// FRAME records in the metadata block.
    private func launchProfile(marks: [ProfileMark] = [], frames: [Instant] = []) throws -> Profile {
        var calls = T.Calls()
        let records = [
            calls.call(function: 0x1200, start: 3_600_000, duration: 1_800_000, depth: 1),
            calls.call(function: 0x1100, start: 3_500_000, duration: 2 * ms, depth: 0),
            calls.call(function: 0x2100, start: 13 * ms, duration: 20 * ms, depth: 2),
            calls.call(function: 0x2000, start: 12 * ms, duration: 28 * ms, depth: 1),
            calls.call(function: 0x3000, start: 60 * ms, duration: 40 * ms, depth: 1),
            calls.call(function: 0x1000, start: 10 * ms, duration: 99 * ms, depth: 0),
        ]
        func tick(_ instant: Instant) -> UInt64 { UInt64(instant.sinceStart.value) + 1 * ms }
        let metadata = marks.flatMap { T.mark($0.name, extra: $0.extra, tick: tick($0.at), tid: $0.tid) }
            + T.frames(at: frames.map(tick))
        var trace = T()
        trace.processStartNs = 1 * ms
        trace.initTick = 3 * ms
        trace.mainTick = 10 * ms
        trace.endTick = 110 * ms
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: records.flatMap { $0 }),
                        .init(stream: 0, tid: 0, seq: 0, payload: metadata)]
        let profile = try syntheticProfile(trace.bytes)
        XCTAssertEqual(profile.marks, marks, "marks come back as written")
        XCTAssertEqual(profile.frames, frames, "frames come back as written")
        return profile
    }

    private func at(_ milliseconds: Double) -> Instant { Instant(nanoseconds: Int64(milliseconds * 1e6)) }

    func testTimelineShowsPointsCallsAndPhases() throws {
        let profile = try launchProfile(marks: [
            ProfileMark(name: "config loaded", extra: "path=/etc/app.conf", at: at(49), tid: 4242),
            ProfileMark(name: "first frame", at: at(102), tid: 4242),
        ])
        var options = ViewOptions()
        options.readyMark = "first frame"
        XCTAssertEqual(TimelineTextView.text(ViewInput([profile]), options: options), """
            timeline of pid 4242 (pid 4242): times since process start
               0.00 ms               process start
               2.00 ms     +2.00 ms  runtime start
               2.50 ms     +0.50 ms  constructor 0x1100 (2.00 ms)
                                          2.60 ms     1.80 ms  0x1200
               9.00 ms     +6.50 ms  main entered
                                         11.00 ms    28.00 ms  0x2000
              49.00 ms    +40.00 ms  mark "config loaded" path=/etc/app.conf
                                         59.00 ms    40.00 ms  0x3000
             102.00 ms    +53.00 ms  mark "first frame"
             109.00 ms     +7.00 ms  exit

            T1 process start -> main              9.00 ms (constructors 2.00 ms)
            T2 main -> "first frame"             93.00 ms
            T3 "first frame" -> end               7.00 ms

            """)
    }

    func testTimelineSaysWhenTheReadyMarkNeverCame() throws {
        var options = ViewOptions()
        options.readyMark = "ready"
        let text = TimelineTextView.text(ViewInput([try launchProfile()]), options: options)
        XCTAssertTrue(text.hasSuffix("""
            T1 process start -> main              9.00 ms (constructors 2.00 ms)
            T2 main -> end                      100.00 ms
            note: no mark "ready" in the trace: T2 runs to the end, and there is no T3

            """), text)
    }

    func testTimelineJSONHasThePointsAndPhases() throws {
        let profile = try launchProfile(marks: [ProfileMark(name: "first frame", at: at(102), tid: 4242)])
        var options = ViewOptions()
        options.readyMark = "first frame"
        let text = TimelineJSONView.text(ViewInput([profile]), options: options)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let points = try XCTUnwrap(document["points"] as? [[String: Any]])
        XCTAssertEqual(points.map { $0["kind"] as? String },
                       ["process_start", "runtime_start", "constructor", "main", "mark", "end"])
        XCTAssertEqual(points.map { $0["at_ms"] as? Double }, [0, 2, 2.5, 9, 102, 109])
        XCTAssertEqual(points[2]["cost_ms"] as? Double, 2)
        let phases = try XCTUnwrap(document["phases"] as? [[String: Any]])
        XCTAssertEqual(phases.map { $0["name"] as? String }, ["T1", "T2", "T3"])
        XCTAssertEqual(phases.map { $0["duration_ms"] as? Double }, [9, 93, 7])
    }

    /// Frames every 16.67 ms except one gap of 100 ms (6 intervals: 5 dropped) over 0x3000's run,
    /// and one of 26 ms (1.56 intervals, rounded to 2: 1 dropped); 25 ms would round to 1.
    func testHitchesCountDropsAndNameTheirCause() throws {
        var frames: [Instant] = []
        var t = 10.0
        while t < 60 { frames.append(at(t)); t += 16.67 }
        frames.append(at(60))
        frames.append(at(160))  // 100 ms: k = 6, 5 dropped
        frames.append(at(186))  // 26 ms: k = 2, 1 dropped
        frames.append(at(200))
        let profile = try launchProfile(frames: frames)
        XCTAssertEqual(HitchesTextView.text(ViewInput([profile])), """
            frames: 7 in 190.00 ms, target interval 16.67 ms (CALLTRACE_FRAME)
            dropped: 6 frames in 2 drop events, at most 5 at once

            worst hitches:
              at    60.00 ms   100.00 ms  5 dropped
                    39.00 ms of   40.00 ms  0x1000 > 0x3000
              at   160.00 ms    26.00 ms  1 dropped

            """)
        let json = HitchesJSONView.text(ViewInput([profile]))
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        XCTAssertEqual(document["dropped_frames"] as? Int, 6)
        XCTAssertEqual(document["drop_events"] as? Int, 2)
        XCTAssertEqual(document["worst_drop"] as? Int, 5)
        XCTAssertEqual((document["hitches"] as? [[String: Any]])?.count, 2)
        let cause = try XCTUnwrap(((document["hitches"] as? [[String: Any]])?.first?["calls"] as? [[String: Any]])?.first)
        XCTAssertEqual(cause["function"] as? String, "0x3000")
        XCTAssertEqual(cause["path"] as? [String], ["0x1000", "0x3000"])
    }

    /// A hitch over a call nested eight deep (0x5000 calls 0x5001 ... 0x5007): the text shows the
    /// outermost call, "...", and the five innermost; the JSON path has all eight.
    func testHitchPathsOfDeepCausesAreShortenedInTextOnly() throws {
        var calls = T.Calls()
        var records: [[UInt8]] = []
        for depth in (0..<8).reversed() {
            records.append(calls.call(function: 0x5000 + UInt64(depth), start: (20 + UInt64(depth)) * ms,
                                      duration: (60 - 2 * UInt64(depth)) * ms, depth: Int64(depth)))
        }
        var trace = T()
        trace.processStartNs = 1 * ms
        trace.initTick = 3 * ms
        trace.mainTick = 10 * ms
        trace.endTick = 120 * ms
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: records.flatMap { $0 }),
                        .init(stream: 0, tid: 0, seq: 0, payload: T.frames(at: [10, 19, 100, 110].map { $0 * ms + 1 * ms }))]
        let profile = try syntheticProfile(trace.bytes)
        let text = HitchesTextView.text(ViewInput([profile]))
        XCTAssertTrue(text.contains("  0x5000 > ... > 0x5003 > 0x5004 > 0x5005 > 0x5006 > 0x5007\n"), text)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(HitchesJSONView.text(ViewInput([profile])).utf8)) as? [String: Any])
        let cause = try XCTUnwrap(((document["hitches"] as? [[String: Any]])?.first?["calls"] as? [[String: Any]])?.first)
        XCTAssertEqual(cause["path"] as? [String], (0..<8).map { "0x\(String(0x5000 + $0, radix: 16))" })
    }

    func testHitchesWithoutFramesSaySo() throws {
        XCTAssertEqual(HitchesTextView.text(ViewInput([try launchProfile()])),
                       "no frames: the program never called calltrace_frame() (see calltrace.h)\n")
    }

    /// A hang in 0x3000 (entered at 59 ms), its stack 0x9000 < 0x3000 < 0x1000: listed by `hangs`,
    /// and under the call in the report's tree.
    func testHangsListTheStackAndTheReportShowsItUnderTheCall() throws {
        var profile = try launchProfile()
        let index = { (name: String) in try XCTUnwrap(profile.functions.firstIndex { $0.name == name }) }
        profile.functions.append(ProfileFunction(name: "0x9000"))
        let stack = [profile.functions.count - 1, try index("0x3000"), try index("0x1000")]
        profile.hangs = [ProfileHang(at: at(80), quiet: Nanoseconds(21_000_000), tid: 4242, function: try index("0x3000"),
                                     callStart: at(59), depth: 1, stack: stack, isPartial: false)]
        profile.hangThreshold = Nanoseconds(20_000_000)
        XCTAssertEqual(HangsTextView.text(ViewInput([profile])), """
            1 hang (CALLTRACE_HANG 20.00 ms)

            hang at 80.00 ms: 21.00 ms without a timed call entered or left, in 0x3000 (entered at 59.00 ms, depth 1)
                0x9000
                0x3000
                0x1000

            """)
        let tree = ReportTreeView.text(ViewInput([profile]))
        XCTAssertTrue(tree.contains("""
             1|  40.00 ms|  0x3000
              |          |    ! hang at 80.00 ms: 21.00 ms without a timed call entered or left, in 0x3000 (entered at 59.00 ms, depth 1)
              |          |    !     0x9000

            """), tree)
        let json = HangsJSONView.text(ViewInput([profile]))
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let hang = try XCTUnwrap((document["hangs"] as? [[String: Any]])?.first)
        XCTAssertEqual((hang["stack"] as? [[String: Any]])?.compactMap { $0["function"] as? String }, ["0x9000", "0x3000", "0x1000"])
        XCTAssertEqual(hang["quiet_ms"] as? Double, 21)
    }
}
