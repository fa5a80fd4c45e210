@testable import CalltraceKit
import Foundation
import XCTest

/// Preempted time: the runtime samples each recording thread's run delay into THREAD_STATE records
/// (older traces: RUN_DELAY records), `report` marks calls that spent much of their time waiting for a CPU, and `--hide-preempted`
/// leaves out calls that reached the threshold only by waiting. The live tests preempt a call on
/// purpose (Fixtures/preempt.c: a busy sibling thread pinned to the same CPU); the synthetic ones
/// pin the arithmetic.
final class PreemptionTests: XCTestCase {
    typealias T = SyntheticTrace

    // MARK: - A call preempted on purpose

    /// What one run of Fixtures/preempt.c left: its trace, and its own measure of `busy`.
    private struct Run {
        var trace: URL
        var directory: URL
        var busyCPU: Double     // ms of CPU `busy` needed
        var busyWall: Double    // ms it took
    }

    private func requireSchedstat() throws {
        guard let text = try? String(contentsOfFile: "/proc/self/schedstat", encoding: .utf8) else {
            throw XCTSkip("no /proc/self/schedstat (a kernel without CONFIG_SCHED_INFO): run delay cannot be sampled")
        }
        // A kernel with sched_info turned off shows zeros, even for a process that has long run.
        guard let ran = text.split(separator: " ").first.flatMap({ UInt64($0) }), ran > 0 else {
            throw XCTSkip("/proc/self/schedstat reads zeros (sched_info is off): run delay cannot be sampled")
        }
    }

    private func runPreempted(_ compiler: Compiler, threads: String = "main", inThread: Bool = false,
                              sleepMs: Int = 150, file: StaticString = #filePath, line: UInt = #line) throws -> Run {
        try requireSchedstat()
        let fixture = try Fixture.build(["preempt.c"], compiler: compiler, file: file, line: line)
        let (result, trace) = try fixture.run(["40", String(sleepMs)] + (inThread ? ["thread"] : []),
                                              environment: ["CALLTRACE_THRESHOLD": "5ms", "CALLTRACE_THREADS": threads],
                                              traceName: "preempt-\(threads)")
        XCTAssertEqual(result.status, 0, "\(result)", file: file, line: line)
        let words = result.stdout.split(whereSeparator: { $0 == " " || $0 == "=" || $0 == "\n" })
        guard words.count >= 5, words[0] == "busy", let cpu = Double(words[2]), let wall = Double(words[4]) else {
            XCTFail("unexpected output: \(result)", file: file, line: line)
            throw XCTSkip("no measurement")
        }
        // Two CPU-bound threads on one CPU share it: the precondition of every assertion below.
        XCTAssertGreaterThanOrEqual(wall, 1.3 * cpu, "busy was not slowed down by its sibling: \(result.stdout)",
                                    file: file, line: line)
        return Run(trace: trace, directory: fixture.directory, busyCPU: cpu, busyWall: wall)
    }

    private func report(_ run: Run, _ options: [String] = []) throws -> CommandResult {
        let result = try calltrace(["report", run.trace.path] + options)
        XCTAssertEqual(result.status, 0, "\(result)")
        return result
    }

    /// The tree line of `function`: its cost and, when marked, its preempted time (ms).
    private func line(of function: String, in tree: String) -> (cost: Double, preempted: Double?)? {
        for text in tree.split(separator: "\n") {
            let columns = text.split(separator: "|", maxSplits: 2)
            guard columns.count == 3 else { continue }
            let name = columns[2].trimmingCharacters(in: .whitespaces)
            guard name == function || name.hasPrefix(function + " ") else { continue }
            guard let cost = Double(columns[1].replacingOccurrences(of: " ms", with: "").trimmingCharacters(in: .whitespaces))
            else { return nil }
            guard let mark = name.range(of: " (preempted ") else { return (cost, nil) }
            let rest = name[mark.upperBound...]
            return (cost, rest.split(separator: " ").first.flatMap { Double($0) })
        }
        return nil
    }

    private func checkBusyIsMarked(_ run: Run, file: StaticString = #filePath, line: UInt = #line) throws {
        let tree = try report(run).stdout
        guard let busy = self.line(of: "busy", in: tree) else {
            return XCTFail("no busy in the tree:\n\(tree)", file: file, line: line)
        }
        guard let preempted = busy.preempted else {
            return XCTFail("busy (\(run.busyCPU) ms of CPU in \(run.busyWall) ms) is not marked preempted:\n\(tree)",
                           file: file, line: line)
        }
        XCTAssertGreaterThanOrEqual(preempted, 0.15 * busy.cost, "too little preempted time:\n\(tree)", file: file, line: line)
        XCTAssertLessThanOrEqual(preempted, busy.cost, "more preempted than the call lasted:\n\(tree)", file: file, line: line)
        // Sleeping is not run delay: the call that slept while its sibling spun is not marked.
        guard let rest = self.line(of: "rest", in: tree) else {
            return XCTFail("no rest in the tree:\n\(tree)", file: file, line: line)
        }
        XCTAssertNil(rest.preempted, "a sleeping call is marked preempted:\n\(tree)", file: file, line: line)
        XCTAssertGreaterThanOrEqual(rest.cost, 150, "\(tree)", file: file, line: line)
    }

    func testCallSharingItsCPUIsMarkedPreemptedAndSleepIsNot() throws {
        for compiler in Compiler.allCases {
            let run = try runPreempted(compiler)
            try checkBusyIsMarked(run)
            let trace = try TraceReader.read(path: run.trace.path)
            XCTAssertEqual(trace.header.schedFlags & TraceFormat.SchedFlag.sampled, TraceFormat.SchedFlag.sampled)
            XCTAssertEqual(trace.header.schedPeriodUs, 2000)
            // The sibling records nothing (CALLTRACE_THREADS=main): every sample is the main thread's.
            XCTAssertFalse(trace.threadStates.isEmpty)
            XCTAssertEqual(Set(trace.threadStates.map(\.stream)), Set(trace.mainThread.map { [$0.stream] } ?? []))
            XCTAssertEqual(trace.runDelays, [], "the runtime writes no RUN_DELAY records since format 4")
        }
    }

    /// With CALLTRACE_THREADS=all, a recording thread other than main is sampled too.
    func testWorkerThreadIsSampledWithAllThreads() throws {
        let run = try runPreempted(.gcc, threads: "all", inThread: true)
        try checkBusyIsMarked(run)
        let trace = try TraceReader.read(path: run.trace.path)
        let worker = trace.threads.first { $0.tid != trace.header.pid }
        XCTAssertNotNil(worker)
        XCTAssertTrue(trace.threadStates.contains { $0.stream == worker?.stream && $0.tid == worker?.tid })
    }

    /// At a threshold between `busy`'s CPU time and its wall time, `busy` is shown, and with
    /// --hide-preempted it is not; `rest` (sleeping, so not preempted) stays either way, in the
    /// tree and in the JSON lines.
    func testHidePreemptedLeavesOutACallOverTheThresholdOnlyByWaiting() throws {
        let run = try runPreempted(.gcc)
        let threshold = "\(Int((run.busyCPU + run.busyWall) / 2))ms"
        let shown = try report(run, ["--threshold", threshold]).stdout
        XCTAssertNotNil(line(of: "busy", in: shown), "busy under --threshold \(threshold):\n\(shown)")
        let hidden = try report(run, ["--threshold", threshold, "--hide-preempted"]).stdout
        XCTAssertNil(line(of: "busy", in: hidden), "busy with --hide-preempted --threshold \(threshold):\n\(hidden)")
        XCTAssertNotNil(line(of: "rest", in: hidden), "\(hidden)")
        XCTAssertNotNil(line(of: "main", in: hidden), "\(hidden)")

        let jsonl = try report(run, ["--threshold", threshold, "--hide-preempted", "--format", "jsonl"]).stdout
        XCTAssertFalse(jsonl.contains("\"function\":\"busy\""), jsonl)
        XCTAssertTrue(jsonl.contains("\"function\":\"rest\""), jsonl)
        let all = try report(run, ["--format", "jsonl"]).stdout
        let busyLine = all.split(separator: "\n").first { $0.contains("\"function\":\"busy\"") } ?? ""
        XCTAssertTrue(busyLine.contains("\"preempted\":"), "no preempted field: \(busyLine)")
    }

    // MARK: - The arithmetic, on synthetic traces (one tick is one ns)

    private func syntheticTrace(delays: [[UInt8]], calls: [[UInt8]], flags: UInt32 = TraceFormat.SchedFlag.sampled,
                                thresholdNs: UInt64 = 0) -> T {
        var trace = T()
        trace.schedFlags = flags
        trace.thresholdNs = thresholdNs
        trace.blocks = [
            .init(stream: 1, tid: 4242, seq: 0, payload: calls.flatMap { $0 }),
            .init(stream: 0, tid: 0, seq: 0, payload: delays.flatMap { $0 }),
        ]
        return trace
    }

    private func call(_ start: UInt64, _ end: UInt64) -> CallRecord {
        CallRecord(function: 0x1000, callSite: 0, startTick: Ticks(start), durationTicks: Ticks(end - start),
                   depth: 0, stream: 1)
    }

    /// A delay is spread evenly over its interval; one longer than its interval is spread over the
    /// `delay` before the sample, but never back into the thread's previous span; spans wholly
    /// inside a call count whole; no call is preempted for longer than it lasted.
    func testDelayIsSpreadOverItsSpan() throws {
        let delays = [
            T.runDelay(stream: 1, tid: 4242, start: 0, length: 1000, delay: 100),        // [0, 1000)
            T.runDelay(stream: 1, tid: 4242, start: 5000, length: 1000, delay: 3000),    // [3000, 6000)
            T.runDelay(stream: 1, tid: 4242, start: 6000, length: 1000, delay: 2500),    // [6000, 7000), 2.5 per tick
            T.runDelay(stream: 2, tid: 4343, start: 0, length: 7000, delay: 7000),       // another thread's
        ]
        let trace = try TraceReader.read(bytes: syntheticTrace(delays: delays, calls: []).bytes)
        XCTAssertEqual(trace.warnings, [])
        XCTAssertEqual(trace.runDelays.count, 4)
        let preemption = Preemption(trace: trace)
        XCTAssertTrue(preemption.isSampled)
        XCTAssertEqual(preemption.preempted(call(250, 750)), Nanoseconds(50))
        XCTAssertEqual(preemption.preempted(call(1000, 3000)), .zero, "the long delay reaches back to 3000 only")
        XCTAssertEqual(preemption.preempted(call(3000, 4500)), Nanoseconds(1500))
        XCTAssertEqual(preemption.preempted(call(6000, 6400)), Nanoseconds(400), "1000 spread, but the call lasted 400")
        XCTAssertEqual(preemption.preempted(call(500, 6500)), Nanoseconds(50 + 3000 + 1250))
        XCTAssertEqual(preemption.preempted(call(0, 7000)), Nanoseconds(100 + 3000 + 2500))
        XCTAssertEqual(preemption.preempted(call(7000, 9000)), .zero)
    }

    func testMarkNeedsAMillisecondAndAQuarterOfTheCost() {
        let ms = Nanoseconds(1_000_000)
        XCTAssertTrue(Preemption.isMarked(cost: Nanoseconds(4_000_000), preempted: ms))
        XCTAssertFalse(Preemption.isMarked(cost: Nanoseconds(4_000_001), preempted: ms))
        XCTAssertFalse(Preemption.isMarked(cost: Nanoseconds(2_000_000), preempted: Nanoseconds(999_999)))
    }

    /// R [0, 200 ms) holds P [10, 110 ms), which holds C [20, 70 ms). Nearly all of P's waiting fell
    /// after C: at --threshold 40ms P (100 ms, 70 preempted) is hidden, and C (50 ms, on its own)
    /// moves up under R, one level below it; its stack depth stays 2.
    func testHiddenCallsChildThatQualifiesMovesUpUnderTheNearestShownCall() throws {
        let ms: UInt64 = 1_000_000
        var calls = T.Calls()
        let records = [
            calls.call(function: 0x3000, start: 20 * ms, duration: 50 * ms, depth: 2),
            calls.call(function: 0x2000, start: 10 * ms, duration: 100 * ms, depth: 1),
            calls.call(function: 0x1000, start: 0, duration: 200 * ms, depth: 0),
        ]
        let delays = [
            T.runDelay(stream: 1, tid: 4242, start: 0, length: 70 * ms, delay: 1000),
            T.runDelay(stream: 1, tid: 4242, start: 70 * ms, length: 40 * ms, delay: 70 * ms),
        ]
        let trace = syntheticTrace(delays: delays, calls: records).bytes
        var options = ViewOptions()
        options.minimumCost = Nanoseconds(40 * Int64(ms))
        XCTAssertEqual(try viewText(ReportTreeView.self, trace, options: options), """
             0| 200.00 ms|0x1000 (preempted 70.00 ms)
             1| 100.00 ms|  0x2000 (preempted 70.00 ms)
             2|  50.00 ms|    0x3000

            """)
        options.hidePreempted = true
        XCTAssertEqual(try viewText(ReportTreeView.self, trace, options: options), """
             0| 200.00 ms|0x1000 (preempted 70.00 ms)
             2|  50.00 ms|  0x3000

            """)
        let jsonl = try viewText(ReportJSONLView.self, trace, options: options)
        XCTAssertEqual(jsonl.split(separator: "\n").map { $0.contains("\"function\":\"0x2000\"") }, [false, false])
    }

    /// Hiding compares with the recording threshold when it is the higher one.
    func testHidingUsesTheRecordingThreshold() throws {
        let ms: UInt64 = 1_000_000
        var calls = T.Calls()
        let records = [calls.call(function: 0x1000, start: 0, duration: 12 * ms, depth: 0)]
        let delays = [T.runDelay(stream: 1, tid: 4242, start: 0, length: 12 * ms, delay: 4 * ms)]
        let trace = syntheticTrace(delays: delays, calls: records, thresholdNs: 10 * ms).bytes
        var options = ViewOptions()
        XCTAssertEqual(try viewText(ReportTreeView.self, trace, options: options), " 0|  12.00 ms|0x1000 (preempted 4.00 ms)\n")
        options.hidePreempted = true
        XCTAssertEqual(try viewText(ReportTreeView.self, trace, options: options), "",
                       "8 ms of its own, under the 10 ms it was recorded with")
    }

    /// Delays no kernel writes (a damaged or crafted trace) give a preempted time no longer than the
    /// call, and never a trap.
    func testAbsurdDelaysNeitherTrapNorExceedTheCall() throws {
        let huge = UInt64(Int64.max)
        let delays = [
            T.runDelay(stream: 1, tid: 4242, start: 0, length: 10, delay: huge),
            T.runDelay(stream: 1, tid: 4242, start: 10, length: 10, delay: huge),
            T.runDelay(stream: 1, tid: 4242, start: 20, length: 10, delay: UInt64.max),
            T.runDelay(stream: 1, tid: 4242, start: 30, length: 0, delay: 5),
            T.runDelay(stream: 1, tid: 4242, start: UInt64.max - 1, length: 1, delay: huge),
        ]
        let trace = try TraceReader.read(bytes: syntheticTrace(delays: delays, calls: []).bytes)
        let preemption = Preemption(trace: trace)
        for (start, end) in [(0, 40), (5, 25), (0, 1), (0, UInt64.max), (29, 31)] as [(UInt64, UInt64)] {
            let preempted = preemption.preempted(call(start, end))
            XCTAssertGreaterThanOrEqual(preempted, .zero)
            XCTAssertLessThanOrEqual(preempted, trace.clock.duration(ticks: Ticks(end - start)))
        }
    }

    /// A RUN_DELAY naming stream 0 is damage: skipped with a warning, the rest is read.
    func testRunDelayForStreamZeroIsSkippedWithAWarning() throws {
        let delays = [
            T.runDelay(stream: 0, tid: 1, start: 0, length: 10, delay: 5),
            T.runDelay(stream: 1, tid: 4242, start: 0, length: 10, delay: 5),
        ]
        let trace = try TraceReader.read(bytes: syntheticTrace(delays: delays, calls: []).bytes)
        XCTAssertEqual(trace.runDelays.map(\.stream), [1])
        XCTAssertEqual(trace.warnings.filter { $0.contains("damaged record 0x87") }.count, 1, "\(trace.warnings)")
    }

    // MARK: - What report says when it cannot tell

    private func reportSynthetic(_ trace: T, name: String, _ options: [String] = []) throws -> CommandResult {
        try Workspace.requireProducts()
        let url = try trace.write(named: name)
        let result = try calltrace(["report", url.path] + options)
        XCTAssertEqual(result.status, 0, "\(result)")
        return result
    }

    func testReportSaysWhenRunDelayCouldNotBeSampled() throws {
        var calls = T.Calls()
        let records = [calls.call(function: 0x1000, start: 0, duration: 12_000_000, depth: 0)]
        let unavailable = syntheticTrace(delays: [], calls: records, flags: TraceFormat.SchedFlag.unavailable)
        let result = try reportSynthetic(unavailable, name: "sched-unavailable.trace")
        XCTAssertTrue(result.stderr.contains("run delay could not be sampled"), result.stderr)
        XCTAssertTrue(result.stdout.contains("0x1000"), result.stdout)

        let old = syntheticTrace(delays: [], calls: records, flags: 0)
        XCTAssertFalse(try reportSynthetic(old, name: "sched-none.trace").stderr.contains("run-delay"))
        let hiding = try reportSynthetic(old, name: "sched-none.trace", ["--hide-preempted"])
        XCTAssertTrue(hiding.stderr.contains("holds no run-delay samples"), hiding.stderr)
        XCTAssertTrue(hiding.stdout.contains("0x1000"), hiding.stdout)
    }
}
