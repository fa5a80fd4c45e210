@testable import CalltraceKit
import Foundation
import XCTest

/// Where a call's time went (THREAD_STATE samples, `ThreadTime`), on synthetic traces whose every
/// sample is known: the arithmetic, then each view that says it (report, top, hitches, hangs,
/// spans, the exports, info) and report's hint about threads that were not recorded. One tick is
/// one nanosecond.
final class ThreadTimeViewTests: XCTestCase {
    private typealias T = SyntheticTrace
    private let ms: UInt64 = 1_000_000

    private func nanoseconds(_ ms: Double) -> Nanoseconds { Nanoseconds(Int64((ms * 1_000_000).rounded())) }

    /// Samples of thread 4242 (stream 1), times in ms:
    ///
    ///     [0, 10)   runFirst     cpu 4, delay 2, then blocked 4 in read /etc/app.conf
    ///     [10, 20)  blockedFirst blocked 8 in read /etc/app.conf, then cpu 2
    ///     [20, 30)  runFirst     cpu 1, delay 1, then blocked 8 in futex
    ///     [30, 40)  blockedBoth  futex 4, cpu 2, read pipe 4
    ///     [40, 50)  blockedBoth  read pipe 4, cpu 2, futex 4
    private func samples() -> [UInt8] {
        let ms = self.ms
        let read = T.ThreadState.syscall(number: 0, name: "read", argument: 3, target: "/etc/app.conf")
        let futex = T.ThreadState.syscall(number: 202, name: "futex", argument: 0x5000)
        let pipe = T.ThreadState.syscall(number: 0, name: "read", argument: 5, target: "pipe:[77]")
        return T.threadState(tick: 0, cpu: 0, runDelay: 0, .running)
            + T.threadState(tick: 10 * ms, cpu: 4 * ms, runDelay: 2 * ms, read)
            + T.threadState(tick: 20 * ms, cpu: 6 * ms, runDelay: 2 * ms, .running)
            + T.threadState(tick: 30 * ms, cpu: 7 * ms, runDelay: 3 * ms, futex)
            + T.threadState(tick: 40 * ms, cpu: 9 * ms, runDelay: 3 * ms, pipe)
            + T.threadState(tick: 50 * ms, cpu: 11 * ms, runDelay: 3 * ms, futex)
    }

    /// The program of the views' tests, on the samples above (main thread 4242, times in ms):
    ///
    ///     0x1000 [0, 50) > { 0x2000 [0, 20), 0x3000 [20, 50) }
    ///     0x4000 [55, 55.5)  (under a millisecond: no split)
    ///
    /// Frames at 0, 50 and 60 ms (the first drops two); a hang captured at 45 ms in 0x3000 after
    /// 20 ms quiet; a span "load" over [0, 20) on the main thread, and "handoff" begun there and
    /// ended on another thread.
    private func program(flags: UInt32 = TraceFormat.SchedFlag.sampled, threadsMode: UInt32 = 0,
                         withSamples: Bool = true) -> T {
        let ms = self.ms
        var calls = T.Calls()
        let records = [
            calls.call(function: 0x2000, start: 0, duration: 20 * ms, depth: 1),
            calls.call(function: 0x3000, start: 20 * ms, duration: 30 * ms, depth: 1),
            calls.call(function: 0x1000, start: 0, duration: 50 * ms, depth: 0),
            calls.call(function: 0x4000, start: 55 * ms, duration: ms / 2, depth: 0),
        ]
        // HANG: stream, tid, captured, call start, fn, depth, quiet, flags, count, pcs.
        var hang: [UInt8] = []
        for value in [1, 4242, 45 * ms, 20 * ms, 0x3000, 1, 20 * ms, 0, 1, 0x3010] { hang += T.varint(value) }
        var trace = T()
        trace.schedFlags = flags
        trace.threadsMode = threadsMode
        trace.hangThresholdNs = 10 * ms
        trace.hangCount = 1
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: T.thread(stream: 1, tid: 4242, name: "app")
                  + (withSamples ? samples() : []) + T.frames(at: [0, 50 * ms, 60 * ms])
                  + T.sized(TraceFormat.Tag.hang, hang)
                  + T.spanBegin(1, "load", tick: 0) + T.spanEnd(1, tick: 20 * ms)
                  + T.spanBegin(2, "handoff", tick: 0) + T.spanEnd(2, tick: 20 * ms, tid: 4243, stream: 2)),
            .init(stream: 1, tid: 4242, seq: 0, payload: records.flatMap { $0 }),
        ]
        return trace
    }

    private func text(_ view: any ProfileView.Type, _ trace: T, options: ViewOptions = ViewOptions()) throws -> String {
        try viewText(view, trace.bytes, options: options)
    }

    // MARK: - The arithmetic

    private func threadTime(_ samples: [UInt8]) throws -> ThreadTime {
        var trace = T()
        trace.schedFlags = TraceFormat.SchedFlag.sampled
        trace.blocks = [.init(stream: 0, tid: 0, seq: 0, payload: samples)]
        let read = try TraceReader.read(bytes: trace.bytes)
        XCTAssertEqual(read.warnings, [])
        return ThreadTime(trace: read)
    }

    private func split(_ time: ThreadTime, _ from: Double, _ to: Double, cost: Double? = nil,
                       stream: UInt32 = 1) -> TimeSplit? {
        time.split(stream: stream, start: Ticks(UInt64(from * 1_000_000)), end: Ticks(UInt64(to * 1_000_000)),
                   cost: nanoseconds(cost ?? (to - from)))
    }

    private func expect(_ split: TimeSplit?, cpu: Double, preempted: Double, blocked: Double, unknown: Double = 0,
                        on: [(String, Double)], file: StaticString = #filePath, line: UInt = #line) {
        guard let split else { return XCTFail("no split", file: file, line: line) }
        XCTAssertEqual(split.cpu, nanoseconds(cpu), "cpu", file: file, line: line)
        XCTAssertEqual(split.preempted, nanoseconds(preempted), "preempted", file: file, line: line)
        XCTAssertEqual(split.blocked, nanoseconds(blocked), "blocked", file: file, line: line)
        XCTAssertEqual(split.unknown, nanoseconds(unknown), "unknown", file: file, line: line)
        XCTAssertEqual(split.blockedOn.map(\.what), on.map(\.0), file: file, line: line)
        XCTAssertEqual(split.blockedOn.map(\.time), on.map { nanoseconds($0.1) }, file: file, line: line)
    }

    /// Running then blocked, blocked then running, blocked in two things, and the whole interval.
    func testLayoutsPlaceEachPartWhereTheSamplesSay() throws {
        let time = try threadTime(samples())
        // runFirst, whole: the parts as they grew.
        expect(split(time, 0, 10), cpu: 4, preempted: 2, blocked: 4, on: [("read /etc/app.conf", 4)])
        // The second half of runFirst [0, 10) is 1 ms running (cpu:delay 2:1) and 4 blocked; the first
        // half of blockedFirst [10, 20) is blocked throughout.
        expect(split(time, 5, 15), cpu: 2.0 / 3, preempted: 1.0 / 3, blocked: 9, on: [("read /etc/app.conf", 9)])
        // The last 2 ms of blockedFirst: running.
        expect(split(time, 18, 20), cpu: 2, preempted: 0, blocked: 0, on: [])
        // blockedBoth: [30, 34) futex, [34, 36) running, [36, 40) read pipe.
        expect(split(time, 30, 40), cpu: 2, preempted: 0, blocked: 8, on: [("futex", 4), ("read pipe", 4)])
        // A call that starts and ends inside it ran at both instants (its hooks did): the running
        // part is placed to hold them.
        expect(split(time, 31, 33), cpu: 2, preempted: 0, blocked: 0, on: [])
        expect(split(time, 35, 38), cpu: 1, preempted: 0, blocked: 2, on: [("read pipe", 2)])
        // Everything: the cumulative sums at the last sample.
        expect(split(time, 0, 50), cpu: 11, preempted: 3, blocked: 36,
               on: [("futex", 16), ("read /etc/app.conf", 12), ("read pipe", 8)])
    }

    /// Blocked in the same thing at both ends, or running at both: the parts spread evenly.
    func testMixedSpreadsThePartsEvenly() throws {
        let ms = self.ms
        let pipe = T.ThreadState.syscall(number: 0, name: "read", argument: 5, target: "pipe:[77]")
        let time = try threadTime(T.threadState(tick: 0, cpu: 0, runDelay: 0, pipe)
                                  + T.threadState(tick: 10 * ms, cpu: 2 * ms, runDelay: 0, pipe)
                                  + T.threadState(tick: 20 * ms, cpu: 7 * ms, runDelay: 1 * ms, .running)
                                  + T.threadState(tick: 30 * ms, cpu: 13 * ms, runDelay: 3 * ms, .running))
        expect(split(time, 4, 6), cpu: 0.4, preempted: 0, blocked: 1.6, on: [("read pipe", 1.6)])
        // Running at both ends: what was not running is blocked in something unknown.
        expect(split(time, 20, 30), cpu: 6, preempted: 2, blocked: 2, on: [("unknown", 2)])
    }

    /// Time no sample interval covers is unknown; a call no interval overlaps, or on a thread that
    /// was not sampled, has no split.
    func testTimeOutsideTheSamplesIsUnknown() throws {
        let time = try threadTime(samples())
        expect(split(time, 45, 55), cpu: 1, preempted: 0, blocked: 4, unknown: 5, on: [("futex", 4)])
        XCTAssertNil(split(time, 60, 70))
        XCTAssertNil(split(time, 0, 10, stream: 2))
        XCTAssertNil(split(time, 10, 10), "an empty call")
    }

    /// The hooks' overhead, taken out of the cost, comes out of the time on a CPU first.
    func testOverheadIsTakenFromTheCPU() throws {
        let time = try threadTime(samples())
        expect(split(time, 0, 10, cost: 9), cpu: 3, preempted: 2, blocked: 4, on: [("read /etc/app.conf", 4)])
        expect(split(time, 0, 10, cost: 5), cpu: 0, preempted: 1, blocked: 4, on: [("read /etc/app.conf", 4)])
    }

    /// Samples no kernel writes: sums that go backwards or exceed the interval, ticks at the ends of
    /// the range. No trap, and no part beyond the call.
    func testCraftedSamplesNeitherTrapNorExceedTheCall() throws {
        let huge = UInt64(Int64.max)
        let time = try threadTime(T.threadState(tick: 0, cpu: huge, runDelay: huge, .running)
                                  + T.threadState(tick: 10, cpu: 0, runDelay: 0, .unknown)
                                  + T.threadState(tick: 20, cpu: UInt64.max, runDelay: UInt64.max, .kernel(wchan: ""))
                                  + T.threadState(tick: UInt64.max - 1, cpu: 5, runDelay: 5, .running)
                                  + T.threadState(tick: UInt64.max, cpu: 5, runDelay: 5, .running))
        for (start, end) in [(0, 30), (5, 15), (0, UInt64.max), (UInt64.max - 2, UInt64.max)] as [(UInt64, UInt64)] {
            let wall = Nanoseconds(Int64(clamping: end - start))
            guard let split = time.split(stream: 1, start: Ticks(start), end: Ticks(end), cost: wall) else {
                XCTFail("no split for [\(start), \(end))")
                continue
            }
            for part in [split.cpu, split.preempted, split.blocked, split.unknown] {
                XCTAssertGreaterThanOrEqual(part, .zero)
                XCTAssertLessThanOrEqual(part, wall)
            }
        }
        XCTAssertFalse(time.segments(stream: 1).isEmpty)
    }

    /// The segments a view draws: each interval laid out as the split reads it.
    func testSegmentsLayOutEachInterval() throws {
        let time = try threadTime(samples())
        let segments = time.segments(stream: 1).map { segment -> String in
            let state: String
            switch segment.state {
            case .running: state = "running"
            case .preempted: state = "preempted"
            case .blocked(let what): state = what
            }
            return "\(segment.start.count / ms)-\(segment.end.count / ms) \(state)"
        }
        XCTAssertEqual(segments, [
            "0-4 running", "4-6 preempted", "6-10 read /etc/app.conf",
            "10-18 read /etc/app.conf", "18-20 running",
            "20-21 running", "21-22 preempted", "22-30 futex",
            "30-34 futex", "34-36 running", "36-40 read pipe",
            "40-44 read pipe", "44-46 running", "46-50 futex",
        ])
        XCTAssertEqual(time.segments(stream: 2), [])
    }

    // MARK: - report

    func testReportTreeSaysWhatSlowCallsWereBlockedIn() throws {
        XCTAssertEqual(try text(ReportTreeView.self, program()), """
             0|  50.00 ms|0x1000 (blocked 36.00 ms: futex 16.00 ms, read /etc/app.conf 12.00 ms, 1 more)
             1|  20.00 ms|  0x2000 (blocked 12.00 ms: read /etc/app.conf)
             1|  30.00 ms|  0x3000 (blocked 24.00 ms: futex 16.00 ms, read pipe 8.00 ms)
              |          |    ! hang at 45.00 ms: 20.00 ms without a timed call entered or left, in 0x3000 \
            (entered at 20.00 ms, depth 1) (blocked 17.00 ms: futex 9.00 ms, read pipe 8.00 ms)
              |          |    !     0x3010
             0|   0.50 ms|0x4000

            """)
        XCTAssertFalse(try text(ReportTreeView.self, program(withSamples: false)).contains("blocked"))
    }

    func testReportJSONAndJSONLinesCarryTheSplit() throws {
        let json = try text(ReportJSONView.self, program())
        XCTAssertTrue(json.contains("\"preempted_ms\":2.000000,\"cpu_ms\":6.000000,\"blocked_ms\":12.000000,"
                                    + "\"blocked_on\":[{\"what\":\"read /etc/app.conf\",\"time_ms\":12.000000}]"), json)
        let lines = try text(ReportJSONLView.self, program()).split(separator: "\n")
        let waiting = try XCTUnwrap(lines.first { $0.contains("\"function\":\"0x3000\"") })
        XCTAssertTrue(waiting.contains("\"preempted\":1.000000,\"cpu\":5.000000,\"blocked\":24.000000,"
                                       + "\"blocked_on\":[{\"what\":\"futex\",\"time\":16.000000},"
                                       + "{\"what\":\"read pipe\",\"time\":8.000000}]"), String(waiting))
        let short = try XCTUnwrap(lines.first { $0.contains("\"function\":\"0x4000\"") })
        XCTAssertFalse(short.contains("\"cpu\""), "under a millisecond: \(short)")
    }

    // MARK: - top

    func testTopHasACPUColumnAndSortsByIt() throws {
        var options = ViewOptions()
        options.sort = .cpu
        XCTAssertEqual(try text(TopTextView.self, program(), options: options), """
            1 run of pid 4242: 4 calls of 4 functions, by cpu; times in ms
               calls      total        cpu       self       mean        p50        p90        p95        p99        max  function
                   1      50.00      11.00       0.00      50.00      50.00      50.00      50.00      50.00      50.00  0x1000
                   1      20.00       6.00      20.00      20.00      20.00      20.00      20.00      20.00      20.00  0x2000
                   1      30.00       5.00      30.00      30.00      30.00      30.00      30.00      30.00      30.00  0x3000
                   1       0.50          -       0.50       0.50       0.50       0.50       0.50       0.50       0.50  0x4000

            """)
        let json = try text(TopJSONView.self, program(), options: options)
        XCTAssertTrue(json.contains("\"total_ms\":20.000000,\"cpu_ms\":6.000000,\"self_ms\""), json)
        XCTAssertTrue(json.contains("\"total_ms\":0.500000,\"cpu_ms\":null,\"self_ms\""), json)
        let old = try text(TopTextView.self, program(withSamples: false))
        XCTAssertFalse(old.contains("cpu"), old)
        XCTAssertFalse(try text(TopJSONView.self, program(withSamples: false)).contains("cpu_ms"))
    }

    // MARK: - hitches, hangs, spans

    func testHitchesSayWhatTheirCallsWereBlockedIn() throws {
        let hitches = try text(HitchesTextView.self, program())
        XCTAssertTrue(hitches.contains("""
              at     0.00 ms    50.00 ms  2 dropped
                    30.00 ms of   30.00 ms  0x1000 > 0x3000 (blocked 24.00 ms: futex 16.00 ms, read pipe 8.00 ms)
                    20.00 ms of   20.00 ms  0x1000 > 0x2000 (blocked 12.00 ms: read /etc/app.conf)

            """), hitches)
        let json = try text(HitchesJSONView.self, program())
        XCTAssertTrue(json.contains("\"path\":[\"0x1000\",\"0x2000\"],\"cpu_ms\":6.000000,\"preempted_ms\":2.000000,"
                                    + "\"blocked_ms\":12.000000,\"blocked_on\":[{\"what\":\"read /etc/app.conf\""), json)
        XCTAssertFalse(try text(HitchesJSONView.self, program(withSamples: false)).contains("cpu_ms"))
    }

    /// The quiet time [25, 45) before the capture: futex 5 + 4, read pipe 4 + 4, cpu 2 + 1.
    func testHangsSayWhatTheThreadWasBlockedIn() throws {
        let hangs = try text(HangsTextView.self, program())
        XCTAssertTrue(hangs.contains("in 0x3000 (entered at 20.00 ms, depth 1) (blocked 17.00 ms: futex 9.00 ms, "
                                     + "read pipe 8.00 ms)\n"), hangs)
        let json = try text(HangsJSONView.self, program())
        XCTAssertTrue(json.contains("\"partial\":false,\"cpu_ms\":3.000000,\"preempted_ms\":0.000000,"
                                    + "\"blocked_ms\":17.000000,\"blocked_on\":[{\"what\":\"futex\",\"time_ms\":9.000000},"
                                    + "{\"what\":\"read pipe\",\"time_ms\":8.000000}]"), json)
        XCTAssertFalse(try text(HangsTextView.self, program(withSamples: false)).contains("blocked"))
    }

    /// A span on one thread is split as a call would be; one that ended on another thread is not.
    func testSpansSayHowMuchOfThemWasBlocked() throws {
        let spans = try text(SpansTextView.self, program())
        XCTAssertTrue(spans.contains("""
            load: the 1 slowest
              20.00 ms  begun at 0.00 ms on thread 4242, ended there
                calls:     50.00 ms  at +0.00 ms  0x1000  (thread 4242)
                dropped frames: 2
                time: on a CPU 6.00 ms, preempted 2.00 ms, blocked 12.00 ms (read /etc/app.conf)

            """), spans)
        let handoff = try XCTUnwrap(spans.range(of: "handoff: the 1 slowest")).upperBound
        let load = try XCTUnwrap(spans.range(of: "load: the 1 slowest")).lowerBound
        XCTAssertFalse(spans[handoff..<load].contains("time:"), "ended on another thread: \(spans)")
        let json = try text(SpansJSONView.self, program())
        XCTAssertTrue(json.contains("\"hangs\":[],\"cpu_ms\":6.000000,\"preempted_ms\":2.000000,\"blocked_ms\":12.000000,"
                                    + "\"blocked_on\":[{\"what\":\"read /etc/app.conf\",\"time_ms\":12.000000}]}"), json)
        XCTAssertFalse(try text(SpansTextView.self, program(withSamples: false)).contains("time:"))
    }

    // MARK: - Exports

    func testChromeArgsCarryTheSplit() throws {
        let chrome = try text(ChromeExport.self, program())
        XCTAssertTrue(chrome.contains("\"args\":{\"cost_ms\":30.000000,\"cpu_ms\":5.000000,\"preempted_ms\":1.000000,"
                                      + "\"blocked_ms\":24.000000,\"blocked_on\":\"futex 16.00 ms, read pipe 8.00 ms\"}"),
                      chrome)
        XCTAssertTrue(chrome.contains("\"args\":{\"cost_ms\":0.500000}"), chrome)
    }

    /// OTLP: the attributes, and the streamed export still the view's bytes.
    func testOTLPAttributesCarryTheSplitStreamedOrNot() throws {
        let bytes = program().bytes
        let profile = try syntheticProfile(bytes)
        let view = ByteOutput.text { OTLPExport.render(ViewInput([profile]), options: ViewOptions(), to: $0) }
        XCTAssertTrue(view.contains("{\"key\":\"calltrace.cpu_ns\",\"value\":{\"intValue\":\"5000000\"}},"
                                    + "{\"key\":\"calltrace.preempted_ns\",\"value\":{\"intValue\":\"1000000\"}},"
                                    + "{\"key\":\"calltrace.blocked_ns\",\"value\":{\"intValue\":\"24000000\"}},"
                                    + "{\"key\":\"calltrace.blocked_on\",\"value\":{\"stringValue\":"
                                    + "\"futex 16.00 ms, read pipe 8.00 ms\"}}"), view)
        for spansPerRequest in [OTLPExport.spansPerRequest, 2] {
            let whole = ByteOutput.text {
                OTLPExport.render(ViewInput([profile]), options: ViewOptions(), to: $0, spansPerRequest: spansPerRequest)
            }
            let streamed = try XCTUnwrap(try streamedOTLP(bytes, spansPerRequest: spansPerRequest))
            XCTAssertEqual(streamed, whole, "requests of \(spansPerRequest) spans")
        }
    }

    /// Perfetto: a "state" track under the sampled thread, its slices the segments.
    func testPerfettoHasAStateTrack() throws {
        var bytes: [UInt8] = []
        let output = ByteOutput { bytes.append(contentsOf: $0) }
        PerfettoExport.render(ViewInput([try syntheticProfile(program().bytes)]), options: ViewOptions(), to: output)
        output.flush()
        let url = Workspace.directory("perfetto").appendingPathComponent("states-\(UUID().uuidString.prefix(8)).pftrace")
        try Data(bytes).write(to: url)
        let summary = try PerfettoTraceSummary.read(url)
        XCTAssertEqual(summary.problems, [])
        let thread = try XCTUnwrap(summary.threadTrack(tid: 4242))
        let state = try XCTUnwrap(summary.track(named: "state"), "\(summary.tracks)")
        XCTAssertEqual(state.parent, thread.uuid)
        XCTAssertEqual(summary.slices(on: state).map { "\($0.start / ms)-\($0.end / ms) \($0.name)" }, [
            "0-4 Running", "4-6 Runnable (preempted)", "6-10 Blocked: read /etc/app.conf",
            "10-18 Blocked: read /etc/app.conf", "18-20 Running",
            "20-21 Running", "21-22 Runnable (preempted)", "22-30 Blocked: futex",
            "30-34 Blocked: futex", "34-36 Running", "36-40 Blocked: read pipe",
            "40-44 Blocked: read pipe", "44-46 Running", "46-50 Blocked: futex",
        ])
    }

    // MARK: - info

    func testInfoSaysHowThreadStatesWereSampled() throws {
        func info(_ flags: UInt32) throws -> String {
            InfoRenderer(trace: try TraceReader.read(bytes: program(flags: flags).bytes)).render()
        }
        let sampled = try info(TraceFormat.SchedFlag.sampled)
        XCTAssertTrue(sampled.contains("thread state: sampled every 2-8 ms inside calls longer than a quarter of the "
                                       + "threshold (at least 1.8 ms); 6 samples\n"), sampled)
        XCTAssertFalse(sampled.contains("preemption:"), sampled)
        let unreadable = try info(TraceFormat.SchedFlag.sampled | TraceFormat.SchedFlag.stateUnreadable)
        XCTAssertTrue(unreadable.contains("; unknown: /proc/self/task/*/syscall could not be read (what threads "
                                          + "were blocked in is unknown)\n"), unreadable)
        let unavailable = try info(TraceFormat.SchedFlag.unavailable)
        XCTAssertTrue(unavailable.contains("thread state: unknown: no /proc/self/task/*/schedstat"), unavailable)
        XCTAssertTrue(try info(0).contains("preemption:   not sampled\n"))
    }

    // MARK: - report's hint

    private func report(_ trace: T, name: String) throws -> CommandResult {
        try Workspace.requireProducts()
        let result = try calltrace(["report", try trace.write(named: name).path])
        XCTAssertEqual(result.status, 0, "\(result)")
        return result
    }

    /// Recorded with the main thread only, main waited on others (futex): report says how to see
    /// their work; recorded with all threads, or without samples, it says nothing.
    func testReportHintsAtRecordingAllThreadsWhenMainWaitedOnThem() throws {
        let hint = "calltrace: the main thread spent 16.00 ms of its calls blocked on other threads (futex); their "
            + "work is not in this tree: record with CALLTRACE_THREADS=all (calltrace record --threads all) to see it\n"
        XCTAssertTrue(try report(program(), name: "futex-main.trace").stderr.contains(hint))
        XCTAssertFalse(try report(program(threadsMode: 1), name: "futex-all.trace").stderr.contains("CALLTRACE_THREADS"))
        XCTAssertFalse(try report(program(withSamples: false), name: "futex-none.trace").stderr.contains("CALLTRACE_THREADS"))
    }
}
