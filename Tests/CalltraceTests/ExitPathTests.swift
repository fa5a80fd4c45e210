import CalltraceKit
import Foundation
import XCTest

/// The ways a process ends (return, exit, _exit, fatal signals, SIGKILL): the trace keeps every
/// completed call, records the open ones where it can, and the program ends as it would untraced.
final class ExitPathTests: XCTestCase {
    func testReturnFromMainClosesTheTraceWithEveryCallFinished() throws {
        let fixture = try Fixture.build(["exit_paths.c"], compiler: .clang)
        let (result, url) = try fixture.run(["return"])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stdout, "ending by return\nreturned\n")
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.outline, Self.exitOutline, trace.tree)
        XCTAssertTrue(trace.calls.allSatisfy { !$0.unfinished && !$0.unwound }, trace.tree)
        let header = trace.trace.header
        XCTAssertTrue(header.closedCleanly)
        XCTAssertFalse(header.crashed)
        XCTAssertNotEqual(header.endTick, 0)
        XCTAssertEqual(trace.trace.warnings, [])
    }

    func testExitFromDeepInsideKeepsFinishedCallsAndMarksOpenOnesUnfinished() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["exit_paths.c"], compiler: compiler)
            let (result, url) = try fixture.run(["exit"])
            XCTAssertEqual(result.status, 3, "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.outline, Self.exitOutline, "\(compiler):\n\(trace.tree)")
            assertOpenCallsUnfinished(trace, label: "\(compiler) exit")
            XCTAssertTrue(trace.trace.header.closedCleanly)
            XCTAssertFalse(trace.trace.header.crashed)
            assertCost(trace.calls(named: "terminate").first, atLeastMs: 15, below: 500, in: trace)
        }
    }

    /// _exit runs no exit handler, but the wrapper closes the trace (the drain thread does the
    /// work, ct_trace_exit_quickly): the open calls are unfinished and the trace closed cleanly,
    /// for _exit, _Exit, _exit from a signal handler, and quick_exit (the runtime's at_quick_exit
    /// handler runs after the program's, which still run; and quick_exit after a vfork child's
    /// quick_exit ran that handler in the child, emptying the list: the wrapper closes the trace).
    func testUnderscoreExitClosesTheTraceWithOpenCallsUnfinished() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["exit_paths.c"], compiler: compiler)
            for (mode, status) in [("_exit", 4), ("_Exit", 5), ("handler_exit", 6), ("quick_exit", 7),
                                   ("vfork_quick_exit", 8)] {
                let (result, url) = try fixture.run([mode])
                XCTAssertEqual(result.status, Int32(status), "\(compiler) \(mode): \(result)")
                XCTAssertEqual(result.stdout, "ending by \(mode)\n" + (mode == "quick_exit" ? "quick_exit handler ran\n" : ""))
                let trace = try RecordedTrace(url)
                XCTAssertEqual(trace.outline, Self.exitOutline, "\(compiler) \(mode):\n\(trace.tree)")
                assertOpenCallsUnfinished(trace, label: "\(compiler) \(mode)")
                XCTAssertTrue(trace.trace.header.closedCleanly, "\(compiler) \(mode)")
                XCTAssertFalse(trace.trace.header.crashed)
                XCTAssertNotEqual(trace.trace.header.endTick, 0)
                XCTAssertEqual(trace.trace.warnings, [], "\(compiler) \(mode)")
                assertCost(trace.calls(named: "terminate").first, atLeastMs: 15, below: 500, in: trace)
            }
        }
    }

    func testAbortKeepsCompletedCallsRecordsOpenOnesAndReraises() throws {
        for compiler in Compiler.allCases {
            try assertCrash(mode: "abort", signal: SIGABRT, compiler: compiler)
        }
    }

    func testSegfaultKeepsCompletedCallsRecordsOpenOnesAndReraises() throws {
        for compiler in Compiler.allCases {
            try assertCrash(mode: "segv", signal: SIGSEGV, compiler: compiler)
        }
    }

    /// Several threads crash at once while main is inside its calls: each crash handler would
    /// write main's open calls, the later ones into a ring the first one's stop had emptied (the
    /// trace then showed them twice, or warned of a burst of dropped calls). They are written once.
    func testThreadsCrashingAtOnceWriteMainsOpenCallsOnce() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["exit_paths.c"], compiler: compiler)
            for run in 1...3 {
                let label = "\(compiler) run \(run)"
                let (result, url) = try fixture.run(["segv_threads"])
                XCTAssertEqual(result.signal, SIGSEGV, "\(label): \(result)")
                let trace = try RecordedTrace(url)
                XCTAssertEqual(trace.outline, Self.exitOutline, "\(label):\n\(trace.tree)")
                assertOpenCallsUnfinished(trace, label: label)
                XCTAssertTrue(trace.trace.header.crashed, label)
                XCTAssertEqual(trace.trace.header.drops, 0, "\(label): \(trace.trace.warnings)")
            }
        }
    }

    private func assertCrash(mode: String, signal: Int32, compiler: Compiler,
                             file: StaticString = #filePath, line: UInt = #line) throws {
        let fixture = try Fixture.build(["exit_paths.c"], compiler: compiler, file: file, line: line)
        let (result, url) = try fixture.run([mode])
        XCTAssertEqual(result.signal, signal, "\(compiler) \(mode): \(result)", file: file, line: line)
        XCTAssertEqual(result.status, 128 + signal, file: file, line: line)
        XCTAssertEqual(result.stdout, "ending by \(mode)\n", file: file, line: line)
        let trace = try RecordedTrace(url, file: file, line: line)
        XCTAssertEqual(trace.outline, Self.exitOutline, "\(compiler) \(mode):\n\(trace.tree)", file: file, line: line)
        assertOpenCallsUnfinished(trace, label: "\(compiler) \(mode)", file: file, line: line)
        XCTAssertTrue(trace.trace.header.crashed, "\(compiler) \(mode): crashed flag", file: file, line: line)
        XCTAssertEqual(trace.trace.header.signal, UInt64(signal), file: file, line: line)
        XCTAssertFalse(trace.trace.header.closedCleanly, file: file, line: line)
        XCTAssertTrue(trace.trace.warnings.contains { $0.contains("crashed") }, "\(trace.trace.warnings)",
                      file: file, line: line)
    }

    func testEveryExitPathKeepsTheUntracedStatusAndOutput() throws {
        let traced = try Fixture.build(["exit_paths.c"], compiler: .gcc)
        let plain = try Fixture.build(["exit_paths.c"], compiler: .gcc, wrapper: false, name: "exit_paths_plain")
        for mode in ["return", "exit", "_exit", "_Exit", "handler_exit", "quick_exit", "vfork_quick_exit", "abort",
                     "segv", "segv_threads", "kill", "ill", "fpe", "overflow"] {
            let untraced = try Command.run(plain.binary.path, [mode], currentDirectory: plain.directory)
            let (result, _) = try traced.run([mode])
            XCTAssertEqual(result.status, untraced.status, "\(mode): traced \(result)\nuntraced \(untraced)")
            XCTAssertEqual(result.signal, untraced.signal, mode)
            XCTAssertEqual(result.stdout, untraced.stdout, mode)
            XCTAssertEqual(result.stderr, "", "\(mode): the runtime prints nothing when all is well")
        }
    }

    /// SIGTRAP from int3 and SIGSYS from seccomp are not faults that happen again when a handler
    /// returns: the instruction after them runs. The program must still die of them.
    func testTrapAndSeccompSignalsStillEndTheProgram() throws {
        let traced = try Fixture.build(["exit_paths.c"], compiler: .gcc)
        let plain = try Fixture.build(["exit_paths.c"], compiler: .gcc, wrapper: false, name: "exit_paths_plain")
        for (mode, signal) in [("trap", SIGTRAP), ("sys", SIGSYS)] {
            let untraced = try Command.run(plain.binary.path, [mode], currentDirectory: plain.directory)
            guard untraced.signal == signal else {
                XCTAssertEqual(mode, "sys", "\(mode): \(untraced)")
                continue // no seccomp here
            }
            let (result, url) = try traced.run([mode])
            XCTAssertEqual(result.status, 128 + signal, "\(mode): the traced program went on:\n\(result)")
            XCTAssertEqual(result.stdout, untraced.stdout, mode)
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.calls(named: "step").count, 2, "\(mode):\n\(trace.tree)")
            XCTAssertTrue(trace.trace.header.crashed, mode)
            XCTAssertEqual(trace.trace.header.signal, UInt64(signal), mode)
        }
    }

    func testCrashesStillDumpCore() throws {
        let prlimit = try which("prlimit")
        let traced = try Fixture.build(["exit_paths.c"], compiler: .gcc)
        let plain = try Fixture.build(["exit_paths.c"], compiler: .gcc, wrapper: false, name: "exit_paths_plain")
        for mode in ["segv", "abort"] {
            let untraced = try Command.run(prlimit, ["--core=unlimited", "--", plain.binary.path, mode],
                                           currentDirectory: plain.directory)
            XCTAssertNotNil(untraced.signal, untraced.description)
            guard coreFiles(in: plain.directory) > 0 else {
                throw XCTSkip("no core file from the untraced program (core_pattern or limits): cannot compare")
            }
            let trace = traced.directory.appendingPathComponent("crash-\(mode).trace")
            let result = try Command.run(prlimit, ["--core=unlimited", "--", traced.binary.path, mode],
                                         environment: ["CALLTRACE_OUTPUT": trace.path],
                                         currentDirectory: traced.directory)
            XCTAssertEqual(result.status, untraced.status, "\(mode): \(result)")
            XCTAssertEqual(coreFiles(in: traced.directory), 1, "\(mode): the traced crash dumps core as the untraced one does")
            XCTAssertTrue(FileManager.default.fileExists(atPath: trace.path))
            for dir in [plain.directory, traced.directory] { removeCoreFiles(in: dir) }
        }
    }

    func testSigkillAfterABurstKeepsEveryCompletedRecord() throws {
        let fixture = try Fixture.build(["burst.c"], compiler: .clang)
        let calls = 20000
        let (result, url) = try fixture.run(["\(calls)", "kill"], environment: ["CALLTRACE_THRESHOLD": "0"])
        XCTAssertEqual(result.signal, SIGKILL, result.description)
        XCTAssertEqual(result.stdout, "burst: \(burstSum(calls))\n")
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.trace.header.drops, 0, "a 16M buffer holds 20000 records")
        let leaves = trace.calls(named: "leaf")
        XCTAssertEqual(leaves.count, calls, "every leaf call returned before the kill")
        XCTAssertTrue(leaves.allSatisfy { $0.depth == 2 && !$0.unfinished && !$0.unwound })
        XCTAssertEqual(trace.trace.records.count, calls, "main and burst were still open")
    }


    /// Events still queued as the image ends (Fixtures/exit_events.c: 100 frames, a span begun and a
    /// mark at once, then the end; the drain thread writes the queue every 1-8 ms) reach the trace,
    /// with and without a flight recorder's limit (whose events have a stream of their own): at
    /// _exit and at a crash the drain thread's last writes take them; system() and posix_spawn exec
    /// in a child that shares the parent's memory, so the parent's queue stays and its drain thread
    /// writes it as usual (docs/design.md, "Marks and frames").
    func testEventsQueuedAsTheImageEndsReachTheTrace() throws {
        let fixture = try Fixture.build(["exit_events.c"], compiler: .gcc)
        let ends: [(mode: String, status: Int32, signal: Int32?)] = [
            ("_exit", 3, nil), ("abort", 128 + SIGABRT, SIGABRT), ("segv", 128 + SIGSEGV, SIGSEGV),
            ("system", 4, nil), ("spawn", 0, nil),
        ]
        for limit in ["0", "1M"] {
            for end in ends {
                let label = "\(end.mode), CALLTRACE_LIMIT=\(limit)"
                let (result, url) = try fixture.run([end.mode], environment: ["CALLTRACE_LIMIT": limit],
                                                    traceName: "\(end.mode)-\(limit)")
                XCTAssertEqual(result.status, end.status, "\(label): \(result)")
                XCTAssertEqual(result.signal, end.signal, label)
                let trace = try RecordedTrace(url).trace
                let spawns = end.mode == "system" || end.mode == "spawn"
                XCTAssertEqual(trace.marks.map(\.name), spawns ? ["before", "after"] : ["before"], "\(label): \(trace.warnings)")
                XCTAssertEqual(trace.marks.first?.extra, end.mode, label)
                XCTAssertEqual(trace.frames.count, 100, label)
                XCTAssertEqual(trace.spanEvents.map(\.name), ["open"], label)
                XCTAssertEqual(trace.header.lost & TraceFormat.Lost.marks, 0, label)
                XCTAssertEqual(trace.header.crashed, end.signal != nil, label)
            }
        }
    }

    /// The tree exit_paths.c builds before it ends.
    private static let exitOutline = ["main", "  outer", "    step", "    step", "    inner", "      terminate"]

    /// The calls open when exit_paths.c ended are unfinished; the two steps had finished.
    private func assertOpenCallsUnfinished(_ trace: RecordedTrace, label: String,
                                           file: StaticString = #filePath, line: UInt = #line) {
        for call in trace.calls {
            let open = call.name != "step"
            XCTAssertEqual(call.unfinished, open, "\(label): \(call.name)\n\(trace.tree)", file: file, line: line)
            XCTAssertFalse(call.unwound, "\(label): \(call.name)\n\(trace.tree)", file: file, line: line)
        }
        assertCost(trace.calls(named: "inner").first, atLeastMs: 17, below: 500, in: trace, file: file, line: line)
        assertCost(trace.calls(named: "main").first, atLeastMs: 41, below: 1500, in: trace, file: file, line: line)
    }



    private func coreFiles(in directory: URL) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasPrefix("core") }.count
    }

    private func removeCoreFiles(in directory: URL) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasPrefix("core") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }
}
