import CalltraceKit
import Foundation
import XCTest

/// Marks and frames (CShims/include/calltrace.h, docs/trace-format.md MARK and FRAME): what a
/// program marks reaches `Trace.marks` and `Trace.frames` in order, with its thread and times, from
/// a constructor before the trace opened and from a thread that does not record; CALLTRACE_FRAME is
/// stored in the header; a program built without the runtime runs as before. Fixtures: marks.c,
/// marks.cpp.
final class MarkTests: XCTestCase {
    private func read(_ url: URL, file: StaticString = #filePath, line: UInt = #line) throws -> Trace {
        guard FileManager.default.fileExists(atPath: url.path) else {
            XCTFail("no trace at \(url.path)", file: file, line: line)
            throw TestFailure("no trace")
        }
        return try TraceReader.read(path: url.path)
    }

    /// "main_tid 123" in the fixture's output.
    private func printed(_ key: String, in stdout: String) -> UInt64? {
        stdout.split(separator: "\n").first { $0.hasPrefix(key + " ") }.flatMap { UInt64($0.dropFirst(key.count + 1)) }
    }

    private func ms(_ trace: Trace, from a: Ticks, to b: Ticks) -> Double {
        b >= a ? trace.clock.duration(ticks: b &- a).milliseconds : -trace.clock.duration(ticks: a &- b).milliseconds
    }

    private func describe(_ trace: Trace) -> String {
        trace.marks.map { "\($0.tick) tid \($0.tid) stream \($0.stream) \"\($0.name)\" \"\($0.extra)\"" }
            .joined(separator: "\n") + "\nframes: \(trace.frames.map(\.tick))\nwarnings: \(trace.warnings)"
    }

    func testMarksAndFramesReachTheTraceInOrderWithThreadsAndTimes() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["marks.c"], compiler: compiler)
            let (result, url) = try fixture.run()
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let trace = try read(url)
            let context = "\(compiler):\n\(describe(trace))"
            let mainTid = try XCTUnwrap(printed("main_tid", in: result.stdout), result.description)
            let workerTid = try XCTUnwrap(printed("worker_tid", in: result.stdout), result.description)
            let mainStream = try XCTUnwrap(trace.mainThread?.stream, context)

            let long = String(repeating: "n", count: 127)
            XCTAssertEqual(trace.marks.map(\.name),
                           ["constructor", "ready", "config", "worker start", "worker done", long, "",
                            String(repeating: "u", count: 126), "done"],
                           "names in time order, cut to 127 bytes (a 2-byte character at the cut left out whole), NULL as empty; \(context)")
            guard trace.marks.count == 9 else { continue }
            let m = trace.marks
            XCTAssertEqual(m.map(\.extra), ["", "", "path=/etc/x", "", "", String(repeating: "x", count: 255), "", "", ""],
                           "extra text cut to 255 bytes; \(context)")
            XCTAssertEqual(m.map(\.tid), [mainTid, mainTid, mainTid, workerTid, workerTid, mainTid, mainTid, mainTid, mainTid],
                           context)
            // The constructor ran before the main thread's first hook (so before the trace opened);
            // the worker does not record (CALLTRACE_THREADS=main): stream 0 for both.
            XCTAssertEqual(m.map(\.stream), [0, mainStream, mainStream, 0, 0, mainStream, mainStream, mainStream, mainStream],
                           context)
            XCTAssertNotEqual(trace.header.mainTick, .zero, context)
            XCTAssertLessThan(m[0].tick, trace.header.mainTick, "the constructor's mark comes before main; \(context)")
            XCTAssertGreaterThanOrEqual(ms(trace, from: trace.header.mainTick, to: m[1].tick), 20, "main sleeps 20 ms first; \(context)")
            XCTAssertGreaterThanOrEqual(ms(trace, from: m[3].tick, to: m[4].tick), 10, context)
            XCTAssertLessThan(ms(trace, from: m[0].tick, to: m[8].tick), 30_000, context)
            XCTAssertLessThanOrEqual(m[2].tick, m[3].tick, context)

            XCTAssertEqual(trace.frames.count, 20, context)
            XCTAssertEqual(Set(trace.frames.map(\.tid)), [mainTid], context)
            XCTAssertEqual(Set(trace.frames.map(\.stream)), [mainStream], context)
            for (index, pair) in zip(trace.frames, trace.frames.dropFirst()).enumerated() {
                let interval = ms(trace, from: pair.0.tick, to: pair.1.tick)
                XCTAssertGreaterThanOrEqual(interval, index == 7 || index == 13 ? 50 : 5, "frame \(index); \(context)")
                XCTAssertLessThan(interval, 5_000, "frame \(index); \(context)")
            }
            if let first = trace.frames.first, let last = trace.frames.last {
                XCTAssertLessThanOrEqual(m[4].tick, first.tick, context)
                XCTAssertLessThanOrEqual(last.tick, m[5].tick, context)
            }
            XCTAssertEqual(trace.header.frameIntervalNs, 16_666_667, "the default, 60 frames a second")
            XCTAssertEqual(trace.header.lost & TraceFormat.Lost.marks, 0, context)
            XCTAssertFalse(trace.warnings.contains { $0.contains("damaged") || $0.contains("marks") }, context)
        }
    }

    /// With CALLTRACE_THREADS=all the worker records: its marks carry its stream.
    func testMarksOfARecordingThreadCarryItsStream() throws {
        let fixture = try Fixture.build(["marks.c"], compiler: .gcc)
        let (result, url) = try fixture.run(environment: ["CALLTRACE_THREADS": "all"], traceName: "all")
        XCTAssertEqual(result.status, 0, result.description)
        let trace = try read(url)
        let workerTid = try XCTUnwrap(printed("worker_tid", in: result.stdout), result.description)
        let worker = try XCTUnwrap(trace.threads.first { $0.tid == workerTid }, describe(trace))
        let marks = trace.marks.filter { $0.tid == workerTid }
        XCTAssertEqual(marks.map(\.name), ["worker start", "worker done"], describe(trace))
        XCTAssertEqual(Set(marks.map(\.stream)), [worker.stream], describe(trace))
    }

    /// Marks from a signal handler that interrupts the thread's own marks: every one is kept whole.
    func testMarksFromASignalHandlerInterruptingMarks() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["marks.c"], compiler: compiler)
            let (result, url) = try fixture.run(["signal"], traceName: "signal")
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let counts = result.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int($0) }
            guard counts.count == 2 else {
                XCTFail("\(compiler): \(result)")
                continue
            }
            let trace = try read(url)
            let loops = trace.marks.filter { $0.name == "loop" }
            let ticks = trace.marks.filter { $0.name == "tick" }
            XCTAssertEqual(trace.header.lost & TraceFormat.Lost.marks, 0, "\(compiler): nothing dropped")
            XCTAssertEqual(loops.count, counts[0], "\(compiler)")
            XCTAssertEqual(ticks.count, counts[1], "\(compiler)")
            XCTAssertGreaterThan(ticks.count, 0, "\(compiler)")
            XCTAssertEqual(loops.count + ticks.count + 1, trace.marks.count, "\(compiler): and the constructor's")
            XCTAssertEqual(Set(loops.map(\.extra)), ["in the main loop"], "\(compiler)")
            XCTAssertEqual(Set(ticks.map(\.extra)), [""], "\(compiler)")
            XCTAssertEqual(Set(trace.marks.map(\.tid)), [trace.header.pid], "\(compiler)")
            XCTAssertFalse(trace.warnings.contains { $0.contains("damaged") }, "\(compiler): \(trace.warnings)")
        }
    }

    /// A mark made just before a crash is in the trace: the crash handler has the drain thread
    /// write the queue before the process dies (it would otherwise wait for the next pass, up to
    /// 8 ms later, and die with the process). The trace still says the program crashed.
    func testMarkJustBeforeACrashIsKept() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["marks.c"], compiler: compiler)
            let (result, url) = try fixture.run(["crash"], traceName: "crash")
            XCTAssertEqual(result.signal, SIGABRT, "\(compiler): \(result)")
            let trace = try read(url)
            XCTAssertEqual(trace.marks.map(\.name), ["constructor", "last words"], "\(compiler): \(describe(trace))")
            XCTAssertEqual(trace.marks.last?.extra, "just before abort", "\(compiler)")
            XCTAssertTrue(trace.header.crashed, "\(compiler)")
            XCTAssertFalse(trace.header.closedCleanly, "\(compiler)")
            let calls = try RecordedTrace(url)
            XCTAssertEqual(calls.calls.filter(\.unfinished).map(\.name), ["main", "crash_soon"], "\(compiler):\n\(calls.tree)")
        }
    }

    /// A fork child's trace holds the child's marks and frames, not the parent's; the parent's
    /// holds its own, before and after.
    func testForkChildRecordsItsOwnMarks() throws {
        let fixture = try Fixture.build(["marks.c"], compiler: .clang)
        let output = fixture.directory.appendingPathComponent("fork-%p.trace")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: fixture.directory.path)) ?? []
            where name.hasPrefix("fork-") {
            try? FileManager.default.removeItem(at: fixture.directory.appendingPathComponent(name))
        }
        let (result, _) = try fixture.run(["fork"], environment: ["CALLTRACE_OUTPUT": output.path])
        XCTAssertEqual(result.status, 0, result.description)
        let childPid = try XCTUnwrap(printed("child", in: result.stdout), result.description)
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path).filter { $0.hasPrefix("fork-") }
        XCTAssertEqual(names.count, 2, "\(names)")
        for name in names {
            let trace = try read(fixture.directory.appendingPathComponent(name))
            if name == "fork-\(childPid).trace" {
                XCTAssertEqual(trace.marks.map(\.name), ["child"], describe(trace))
                XCTAssertEqual(trace.marks.map(\.tid), [childPid], describe(trace))
                XCTAssertEqual(trace.frames.count, 2, describe(trace))
                XCTAssertEqual(trace.header.frameIntervalNs, 16_666_667)
            } else {
                XCTAssertEqual(trace.marks.map(\.name), ["constructor", "parent before", "parent after"], describe(trace))
                XCTAssertEqual(trace.frames.count, 0, describe(trace))
            }
        }
    }

    /// A program built with plain -finstrument-functions and no runtime, run under `calltrace
    /// record` (which preloads the runtime): the header's weak references find it, the marks are kept.
    func testMarksOfAPlainBuildAreRecordedUnderRecord() throws {
        let include = Workspace.packageRoot.appendingPathComponent("CShims/include").path
        let fixture = try Fixture.build(["marks.c"], compiler: .gcc, flags: ["-O2", "-g", "-fPIE", "-pie", "-I", include],
                                        wrapper: false, name: "marks-record")
        let trace = fixture.directory.appendingPathComponent("record.trace")
        let result = try RecordCommand.run(["-o", trace.path, "--frame", "20ms"], [fixture.binary.path], in: fixture.directory)
        XCTAssertEqual(result.status, 0, result.description)
        let read = try read(trace)
        XCTAssertEqual(read.header.frameIntervalNs, 20_000_000, "record --frame")
        XCTAssertEqual(read.marks.first?.name, "constructor", describe(read))
        XCTAssertEqual(read.marks.last?.name, "done", describe(read))
        XCTAssertEqual(read.marks.count, 9, describe(read))
        XCTAssertEqual(read.frames.count, 20, describe(read))
    }

    func testRecordRefusesAFrameIntervalOfZero() throws {
        let directory = Workspace.directory("marks-record-zero")
        let result = try RecordCommand.run(["--frame", "0"], ["/bin/true"], in: directory)
        XCTAssertNotEqual(result.status, 0, result.description)
        XCTAssertTrue(result.stderr.contains("--frame '0' is not valid: expected a duration above 0"), result.stderr)
    }

    func testFrameSettingIsStoredAndABadValueWarnsOnceAndUsesTheDefault() throws {
        let fixture = try Fixture.build(["marks.c"], compiler: .gcc)
        let (good, goodURL) = try fixture.run(["burst", "10"], environment: ["CALLTRACE_FRAME": "33ms"], traceName: "frame33")
        XCTAssertEqual(good.status, 0, good.description)
        XCTAssertFalse(good.stderr.contains("CALLTRACE_FRAME"), good.description)
        let trace = try read(goodURL)
        XCTAssertEqual(trace.header.frameIntervalNs, 33_000_000)
        XCTAssertEqual(trace.frames.count, 10)
        for bad in ["abc", "0", "-5ms", "16.67parsecs"] {
            let (result, url) = try fixture.run(["burst", "10"], environment: ["CALLTRACE_FRAME": bad], traceName: "bad")
            XCTAssertEqual(result.status, 0, result.description)
            let warnings = result.stderr.split(separator: "\n").filter { $0.contains("CALLTRACE_FRAME") }
            XCTAssertEqual(warnings.count, 1, "CALLTRACE_FRAME=\(bad): \(result)")
            XCTAssertEqual(try read(url).header.frameIntervalNs, 16_666_667, "CALLTRACE_FRAME=\(bad)")
        }
    }

    /// More frames at once than the queue holds: each one is in the trace or the header says some
    /// were dropped (never lost silently).
    func testABurstOfFramesIsRecordedOrCounted() throws {
        let fixture = try Fixture.build(["marks.c"], compiler: .clang)
        let (result, url) = try fixture.run(["burst", "5000"])
        XCTAssertEqual(result.status, 0, result.description)
        let trace = try read(url)
        XCTAssertGreaterThan(trace.frames.count, 0)
        if trace.frames.count < 5000 {
            XCTAssertNotEqual(trace.header.lost & TraceFormat.Lost.marks, 0, "\(trace.frames.count) frames, no drop noted")
            XCTAssertTrue(trace.warnings.contains { $0.contains("marks, frames or span events were dropped") }, "\(trace.warnings)")
        }
        // Frames of one thread come in order.
        XCTAssertEqual(trace.frames.map(\.tick), trace.frames.map(\.tick).sorted())
    }

    /// calltrace.h from C++, built by calltrace-c++ (which finds the header itself).
    func testCxxProgramIncludesTheHeaderAndRecords() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["marks.cpp"], compiler: compiler, cxx: true, name: "marks-cpp")
            let (result, url) = try fixture.run()
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            XCTAssertEqual(result.stdout, "frames 3\n")
            let trace = try read(url)
            XCTAssertEqual(trace.marks.map(\.name), ["cpp"], "\(compiler)")
            XCTAssertEqual(trace.marks.map(\.extra), ["from C++"], "\(compiler)")
            XCTAssertEqual(trace.frames.count, 3, "\(compiler)")
        }
    }

    /// The header keeps a plain build working: no runtime, no instrumentation, strict warnings.
    func testPlainBuildWithoutTheRuntimeRunsUnchanged() throws {
        let include = Workspace.packageRoot.appendingPathComponent("CShims/include").path
        let builds: [(compiler: String, source: String, flags: [String])] = [
            ("gcc", "marks.c", ["-std=c99", "-Wall", "-Wextra", "-Werror"]),
            ("clang", "marks.c", ["-std=c99", "-Wall", "-Wextra", "-Werror"]),
            ("g++", "marks.cpp", ["-Wall", "-Wextra", "-Werror"]),
            ("clang++", "marks.cpp", ["-Wall", "-Wextra", "-Werror"]),
        ]
        for build in builds {
            let directory = Workspace.directory("marks-plain-\(build.compiler)")
            let binary = directory.appendingPathComponent("plain")
            let compiled = try Command.run(try which(build.compiler),
                                           build.flags + ["-O2", "-I", include,
                                                          Workspace.fixtures.appendingPathComponent(build.source).path,
                                                          "-o", binary.path, "-lpthread"])
            XCTAssertEqual(compiled.status, 0, "\(build.compiler): \(compiled)")
            let nm = try Command.run(try which("nm"), ["-D", binary.path])
            XCTAssertFalse(nm.stdout.contains("calltrace_rt") && !nm.stdout.contains(" w calltrace_rt"),
                           "only weak references to the runtime: \(nm.stdout)")
            let run = try Command.run(binary.path, [], environment: ["CALLTRACE_OUTPUT": directory.appendingPathComponent("none.trace").path])
            XCTAssertEqual(run.status, 0, "\(build.compiler): \(run)")
            XCTAssertTrue(run.stdout.contains(build.source == "marks.c" ? "main_tid" : "frames 3"), run.description)
            XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("none.trace").path))
        }
    }

    /// The cost of one calltrace_frame() call with the runtime recording, in rounds the drain
    /// thread keeps up with; printed for the record, bounded loosely.
    func testFrameCallIsCheap() throws {
        let fixture = try Fixture.build(["marks.c"], compiler: .gcc)
        let (result, url) = try fixture.run(["cost", "51200"])
        XCTAssertEqual(result.status, 0, result.description)
        let ns = try XCTUnwrap(result.stdout.split(separator: " ").last.flatMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) },
                               result.description)
        print("calltrace_frame: \(ns) ns per call (recording)")
        XCTAssertLessThan(ns, 10_000, result.description)
        let trace = try read(url)
        if trace.frames.count < 51200 {
            XCTAssertNotEqual(trace.header.lost & TraceFormat.Lost.marks, 0, "\(trace.frames.count) frames, no drop noted")
        }
        let untraced = try fixture.runUntraced(["cost", "51200"])
        XCTAssertEqual(untraced.status, 0, untraced.description)
        print("calltrace_frame: \(untraced.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").last ?? "?") ns per call (runtime loaded, not recording)")
    }

    // MARK: - Reading synthetic traces

    typealias T = SyntheticTrace

    func testReaderSortsMarksAndSkipsDamagedOnesWithAWarning() throws {
        var synthetic = T()
        synthetic.frameIntervalNs = 33_333_333
        let damaged = [TraceFormat.Tag.mark] + T.varint(2) + [1, 7]   // stream, tid, then nothing
        let badStream = T.sized(TraceFormat.Tag.frame, T.varint(1 << 40) + T.varint(1) + T.varint(5))
        synthetic.blocks = [
            .init(stream: 0, tid: 0, seq: 0,
                  payload: T.process(executable: "/bin/p", arguments: ["p"])
                    + T.mark("late", extra: "x=1", tick: 9000, tid: 7, stream: 0)
                    + damaged
                    + T.mark("early", tick: 1000)
                    + T.frames(at: [3000, 2000])
                    + badStream
                    + T.frame(tick: 4000, tid: 8, stream: 2)),
            .init(stream: 1, tid: 4242, seq: 0, payload: T.leafCalls(2)),
        ]
        let trace = try TraceReader.read(bytes: synthetic.bytes)
        XCTAssertEqual(trace.header.frameIntervalNs, 33_333_333)
        XCTAssertEqual(trace.marks, [TraceMark(tick: 1000, tid: 4242, stream: 1, name: "early"),
                                     TraceMark(tick: 9000, tid: 7, stream: 0, name: "late", extra: "x=1")])
        XCTAssertEqual(trace.frames, [TraceFrame(tick: 2000, tid: 4242, stream: 1), TraceFrame(tick: 3000, tid: 4242, stream: 1),
                                      TraceFrame(tick: 4000, tid: 8, stream: 2)])
        XCTAssertEqual(trace.warnings.filter { $0.contains("damaged record 0x88") }.count, 1, "\(trace.warnings)")
        XCTAssertEqual(trace.warnings.filter { $0.contains("damaged record 0x89") }.count, 1, "\(trace.warnings)")
        let info = InfoRenderer(trace: trace).render()
        XCTAssertTrue(info.contains("marks:") && info.contains("2 marks, 3 frames (target interval 33.33 ms)"), info)
    }

    func testLostMarksBitIsExplained() throws {
        var synthetic = T()
        synthetic.lost = TraceFormat.Lost.marks
        synthetic.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: T.leafCalls(1))]
        let trace = try TraceReader.read(bytes: synthetic.bytes)
        XCTAssertTrue(trace.warnings.contains { $0.hasPrefix("marks, frames or span events were dropped") }, "\(trace.warnings)")
        XCTAssertFalse(trace.warnings.contains { $0.contains("does not know") }, "\(trace.warnings)")
    }
}
