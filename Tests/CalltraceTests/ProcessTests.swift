import CalltraceKit
import Foundation
import XCTest

/// Process-level reliability: threads, fork and exec, the ways a process ends, dlopen/dlclose, a
/// full ring, bad settings, and what the runtime may and may not do to files.
final class ProcessTests: XCTestCase {
    // MARK: - Threads

    func testOnlyTheMainThreadIsRecordedByDefault() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["threads.c"], compiler: compiler)
            let (result, url) = try fixture.run()
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            XCTAssertEqual(result.stdout, "threads: done\n")
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.outline, ["main", "  main_job"], "\(compiler):\n\(trace.tree)")
            XCTAssertEqual(trace.trace.threads.map(\.tid), [trace.trace.header.pid], "\(compiler): \(trace.trace.threads)")
            XCTAssertFalse(trace.trace.header.tracesAllThreads)
            assertCost(trace.calls(named: "main_job").first, atLeastMs: 20, below: 500, in: trace)
            // main waited for "early" (12 ms) before its own 20 ms of work.
            assertCost(trace.calls(named: "main").first, atLeastMs: 32, below: 1500, in: trace)
        }
    }

    func testAllThreadsModeGivesEveryThreadItsOwnTree() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["threads.c"], compiler: compiler)
            let (result, url) = try fixture.run(environment: ["CALLTRACE_THREADS": "all"])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            let threads = trace.trace.threads
            XCTAssertTrue(trace.trace.header.tracesAllThreads)
            // main, early, late, quit: the runtime's own drain thread is never instrumented.
            XCTAssertEqual(threads.count, 4, "\(compiler): \(threads)\n\(trace.tree)")
            XCTAssertEqual(Set(threads.map(\.stream)).count, threads.count, "one stream per thread: \(threads)")
            XCTAssertEqual(Set(threads.map(\.tid)).count, threads.count, "one tid per thread: \(threads)")
            XCTAssertEqual(threads.first?.tid, trace.trace.header.pid, "the main thread comes first: \(threads)")
            if let main = threads.first {
                XCTAssertEqual(trace.outline(ofStream: main.stream), ["main", "  main_job"], "\(compiler):\n\(trace.tree)")
            }
            // "early" finished (and exited) long before the process did: nothing of it is lost.
            let early = try XCTUnwrap(trace.thread(calling: "early_job"), "\(compiler):\n\(trace.tree)")
            XCTAssertEqual(trace.outline(ofStream: early.stream), ["early_thread", "  early_job"], "\(compiler):\n\(trace.tree)")
            let late = try XCTUnwrap(trace.thread(calling: "late_job"), "\(compiler):\n\(trace.tree)")
            XCTAssertEqual(trace.outline(ofStream: late.stream), ["late_thread", "  late_job"], "\(compiler):\n\(trace.tree)")
            let quit = try XCTUnwrap(trace.thread(calling: "quit_step"), "\(compiler):\n\(trace.tree)")
            XCTAssertTrue(Set([early.stream, late.stream, quit.stream, threads[0].stream]).count == 4,
                          "each worker's calls are in a stream of their own:\n\(trace.tree)")
            assertCost(trace.calls(named: "early_job").first, atLeastMs: 12, below: 500, in: trace)
            assertCost(trace.calls(named: "late_job").first, atLeastMs: 15, below: 500, in: trace)
            assertCost(trace.calls(named: "quit_step").first, atLeastMs: 12, below: 500, in: trace)
            XCTAssertTrue(trace.calls(named: "quit_step").allSatisfy { !$0.unfinished && !$0.unwound }, trace.tree)
            XCTAssertTrue(trace.trace.header.closedCleanly)
        }
    }

    func testThreadNamesAreKeptWhenSet() throws {
        let fixture = try Fixture.build(["threads.c"], compiler: .gcc)
        let (_, url) = try fixture.run(environment: ["CALLTRACE_THREADS": "all"])
        let trace = try RecordedTrace(url)
        // "early" named itself and exited at once; main named "late" from outside.
        XCTAssertEqual(trace.thread(calling: "early_job")?.name, "early", "\(trace.trace.threads)")
        XCTAssertEqual(trace.thread(calling: "late_job")?.name, "late", "\(trace.trace.threads)")
        XCTAssertEqual(trace.trace.threads.first?.name, "threads", "the main thread keeps the program's name")
    }

    /// pthread_exit from inside a call leaves the thread's open calls without their exit hooks,
    /// like exit() does on the main thread: they must still be recorded (unfinished or unwound).
    func testPthreadExitFromInsideACallKeepsTheThreadsOpenCalls() throws {
        let fixture = try Fixture.build(["threads.c"], compiler: .gcc)
        let (result, url) = try fixture.run(environment: ["CALLTRACE_THREADS": "all"])
        XCTAssertEqual(result.status, 0, result.description)
        let trace = try RecordedTrace(url)
        let quit = try XCTUnwrap(trace.thread(calling: "quit_step"), trace.tree)
        XCTAssertEqual(trace.outline(ofStream: quit.stream), ["quit_thread", "  quit_midway", "    quit_step"],
                       "the calls open at pthread_exit are lost:\n\(trace.tree)")
        for name in ["quit_thread", "quit_midway"] {
            guard let call = trace.calls(named: name).first else { continue }
            XCTAssertTrue(call.unfinished || call.unwound, "\(name) never returned:\n\(trace.tree)")
            assertCost(call, atLeastMs: 15, below: 500, in: trace)
        }
    }

    /// exit() on a worker while main is inside a call: the process exits normally, so main's open
    /// calls are recorded as unfinished, as they would be had main called exit() itself.
    func testExitFromAWorkerThreadRecordsTheMainThreadsOpenCalls() throws {
        let fixture = try Fixture.build(["worker_exit.c"], compiler: .gcc)
        for threads in ["main", "all"] {
            let (result, url) = try fixture.run(["exit"], environment: ["CALLTRACE_THREADS": threads])
            XCTAssertEqual(result.status, 6, "\(threads): \(result)")
            let trace = try RecordedTrace(url)
            XCTAssertTrue(trace.trace.header.closedCleanly, threads)
            let main = try XCTUnwrap(trace.trace.threads.first, threads)
            XCTAssertEqual(main.tid, trace.trace.header.pid)
            XCTAssertEqual(trace.outline(ofStream: main.stream), ["main", "  main_step", "  main_wait"],
                           "\(threads): main's open calls are lost:\n\(trace.tree)")
            XCTAssertEqual(trace.calls(named: "main_wait").first?.unfinished, true, "\(threads):\n\(trace.tree)")
            assertCost(trace.calls(named: "main_wait").first, atLeastMs: 10, below: 1000, in: trace)
            if threads == "all" {
                XCTAssertEqual(trace.calls(named: "worker_end").first?.unfinished, true, trace.tree)
                assertCost(trace.calls(named: "worker_end").first, atLeastMs: 25, below: 1000, in: trace)
            }
        }
    }

    func testCrashOnAWorkerThreadKeepsCompletedCallsAndTheStatus() throws {
        let fixture = try Fixture.build(["worker_exit.c"], compiler: .clang)
        for threads in ["main", "all"] {
            let (result, url) = try fixture.run(["segv"], environment: ["CALLTRACE_THREADS": threads])
            XCTAssertEqual(result.signal, SIGSEGV, "\(threads): \(result)")
            XCTAssertEqual(result.stdout, "worker ends the process by segv\n")
            let trace = try RecordedTrace(url)
            XCTAssertTrue(trace.trace.header.crashed, threads)
            XCTAssertEqual(trace.trace.header.signal, UInt64(SIGSEGV), threads)
            XCTAssertEqual(trace.calls(named: "main_step").count, 1, "\(threads):\n\(trace.tree)")
            XCTAssertFalse(trace.calls(named: "main_step").first?.unfinished ?? true)
            if threads == "all" {
                // The crashing thread's own open calls can be written safely from its handler.
                XCTAssertEqual(trace.calls(named: "worker_end").first?.unfinished, true, trace.tree)
                XCTAssertEqual(trace.calls(named: "worker_thread").first?.unfinished, true, trace.tree)
            }
        }
    }

    /// Rounds of 32 threads that each make one slow call and exit: a thread pool's life. Every
    /// thread's calls must be there with the default buffer (256 records in all).
    func testManyShortLivedThreadsLoseNothing() throws {
        let fixture = try Fixture.build(["many_threads.c"], compiler: .gcc)
        let (result, url) = try fixture.run(["4", "32"], environment: ["CALLTRACE_THREADS": "all"])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stdout, "many_threads: 128\n")
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.trace.header.drops, 0, "records dropped with a 16M buffer")
        XCTAssertEqual(trace.calls(named: "job").count, 128, "one job per thread")
        XCTAssertEqual(trace.calls(named: "pool_thread").count, 128)
        XCTAssertEqual(Set(trace.calls(named: "job").map(\.stream)).count, trace.calls(named: "job").count,
                       "each thread in its own stream")
        XCTAssertEqual(trace.calls(named: "run_round").count, 4, trace.outline.prefix(20).joined(separator: "\n"))
    }

    // MARK: - fork and exec

    func testForkedChildWritesItsOwnTraceNamedWithItsPid() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["fork.c"], compiler: compiler)
            let template = fixture.directory.appendingPathComponent("fork-%p.trace").path
            let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": template])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let parentPid = try XCTUnwrap(pid(after: "parent", in: result.stdout), result.stdout)
            let childPid = try XCTUnwrap(pid(after: "child", in: result.stdout), result.stdout)
            XCTAssertEqual(traceFiles(in: fixture.directory), ["fork-\(childPid).trace", "fork-\(parentPid).trace"].sorted(),
                           "\(compiler): one trace per process, %p expanded")

            let parent = try RecordedTrace(fixture.directory.appendingPathComponent("fork-\(parentPid).trace"))
            XCTAssertEqual(parent.trace.header.pid, UInt64(parentPid))
            XCTAssertEqual(parent.outline, ["main", "  before_fork", "  parent_work"], "\(compiler) parent:\n\(parent.tree)")
            XCTAssertTrue(parent.calls(named: "child_work").isEmpty, "the child's calls are not the parent's")
            XCTAssertTrue(parent.trace.header.closedCleanly)
            XCTAssertEqual(parent.trace.warnings, [], "\(compiler) parent")

            let child = try RecordedTrace(fixture.directory.appendingPathComponent("fork-\(childPid).trace"))
            XCTAssertEqual(child.trace.header.pid, UInt64(childPid))
            XCTAssertEqual(child.trace.process?.ppid, UInt64(parentPid))
            // The call that forked goes on in the child; what ran before the fork stays the parent's.
            XCTAssertEqual(child.outline, ["main", "  spawn_child", "    child_work"], "\(compiler) child:\n\(child.tree)")
            XCTAssertTrue(child.calls.allSatisfy { !$0.unfinished && !$0.unwound }, child.tree)
            assertCost(child.calls(named: "child_work").first, atLeastMs: 15, below: 500, in: child)
            assertCost(child.calls(named: "main").first, atLeastMs: 27, below: 1500, in: child)
            XCTAssertTrue(child.trace.header.closedCleanly)
            XCTAssertEqual(child.trace.warnings, [], "\(compiler) child")
        }
    }

    func testForkWithoutPidInTheNameGivesTheChildANewFile() throws {
        let fixture = try Fixture.build(["fork.c"], compiler: .gcc)
        let (result, url) = try fixture.run(traceName: "shared")
        XCTAssertEqual(result.status, 0, result.description)
        let parentPid = try XCTUnwrap(pid(after: "parent", in: result.stdout))
        let childPid = try XCTUnwrap(pid(after: "child", in: result.stdout))
        XCTAssertEqual(traceFiles(in: fixture.directory), ["shared-1.trace", "shared.trace"])
        let parent = try RecordedTrace(url)
        let child = try RecordedTrace(fixture.directory.appendingPathComponent("shared-1.trace"))
        XCTAssertEqual(parent.trace.header.pid, UInt64(parentPid))
        XCTAssertEqual(child.trace.header.pid, UInt64(childPid))
        // spawn_child is fast in the parent, unless a busy machine makes fork() take 10 ms.
        XCTAssertEqual(parent.outline.filter { !$0.hasSuffix("spawn_child") }, ["main", "  before_fork", "  parent_work"],
                       parent.tree)
        XCTAssertEqual(child.outline, ["main", "  spawn_child", "    child_work"], child.tree)
        XCTAssertEqual(parent.trace.warnings, [])
        XCTAssertEqual(child.trace.warnings, [])
    }

    func testForkFromAWorkerThreadTracesTheChild() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["fork.c"], compiler: compiler)
            let template = fixture.directory.appendingPathComponent("fork-%p.trace").path
            let (result, _) = try fixture.run(["thread"], environment: ["CALLTRACE_OUTPUT": template])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let parentPid = try XCTUnwrap(pid(after: "parent", in: result.stdout), result.stdout)
            let childPid = try XCTUnwrap(pid(after: "child", in: result.stdout), result.stdout)
            let parent = try RecordedTrace(fixture.directory.appendingPathComponent("fork-\(parentPid).trace"))
            XCTAssertEqual(parent.outline, ["main", "  before_fork", "  parent_work"], "\(compiler):\n\(parent.tree)")
            // The forking worker is the child's only thread, its main thread: it is recorded.
            let child = try RecordedTrace(fixture.directory.appendingPathComponent("fork-\(childPid).trace"))
            XCTAssertEqual(child.calls(named: "child_work").count, 1, "\(compiler) child:\n\(child.tree)")
            assertCost(child.calls(named: "child_work").first, atLeastMs: 15, below: 500, in: child)
            XCTAssertEqual(child.trace.threads.map(\.tid), [UInt64(childPid)], "\(compiler): \(child.trace.threads)")
            XCTAssertTrue(child.trace.header.closedCleanly)
        }
    }

    func testExecStartsAFreshTraceAndKeepsTheOneBefore() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["exec.c"], compiler: compiler)
            let template = fixture.directory.appendingPathComponent("exec-%p.trace").path
            let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": template])
            try assertExecTraces(result, in: fixture.directory, base: "exec-", label: "\(compiler) linked")
        }
    }

    func testExecWithThePreloadedRuntimeStartsAFreshTrace() throws {
        let fixture = try Fixture.build(["exec.c"], compiler: .gcc, wrapper: false)
        let (result, _) = try fixture.run(environment: ["LD_PRELOAD": Workspace.runtimeLibrary.path],
                                          traceName: "exec")
        try assertExecTraces(result, in: fixture.directory, base: "exec", label: "preloaded")
    }

    /// exec.c ran as pid P with the trace named `<base>[P].trace`: the image before exec wrote that
    /// one, the image after it `<base>[P]-1.trace`.
    private func assertExecTraces(_ result: CommandResult, in directory: URL, base: String, label: String,
                                  file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(result.status, 0, "\(label): \(result)", file: file, line: line)
        let before = try XCTUnwrap(pid(after: "before exec", in: result.stdout), result.stdout, file: file, line: line)
        let after = try XCTUnwrap(pid(after: "after exec", in: result.stdout), result.stdout, file: file, line: line)
        XCTAssertEqual(before, after, "exec keeps the pid", file: file, line: line)
        let name = base.hasSuffix("-") ? "\(base)\(before)" : base
        XCTAssertEqual(traceFiles(in: directory), ["\(name)-1.trace", "\(name).trace"], label, file: file, line: line)

        let first = try RecordedTrace(directory.appendingPathComponent("\(name).trace"), file: file, line: line)
        XCTAssertEqual(first.trace.header.pid, UInt64(before), file: file, line: line)
        XCTAssertEqual(first.trace.process?.arguments.count, 1, "\(label): \(String(describing: first.trace.process))",
                       file: file, line: line)
        XCTAssertEqual(first.calls(named: "before_exec").count, 1, "\(label) before exec:\n\(first.tree)", file: file, line: line)
        XCTAssertTrue(first.calls(named: "after_exec").isEmpty, "\(label): the new image wrote into the old trace:\n\(first.tree)",
                      file: file, line: line)
        assertCost(first.calls(named: "before_exec").first, atLeastMs: 12, below: 500, in: first, file: file, line: line)

        let second = try RecordedTrace(directory.appendingPathComponent("\(name)-1.trace"), file: file, line: line)
        XCTAssertEqual(second.trace.header.pid, UInt64(before), file: file, line: line)
        XCTAssertEqual(second.trace.process?.arguments.last, "after", file: file, line: line)
        XCTAssertEqual(second.outline, ["main", "  after_exec"], "\(label) after exec:\n\(second.tree)", file: file, line: line)
        XCTAssertTrue(second.trace.header.closedCleanly, file: file, line: line)
        XCTAssertEqual(second.trace.warnings, [], label, file: file, line: line)
    }

    // MARK: - Exit paths

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

    func testUnderscoreExitKeepsEveryCompletedCall() throws {
        let fixture = try Fixture.build(["exit_paths.c"], compiler: .gcc)
        let (result, url) = try fixture.run(["_exit"])
        XCTAssertEqual(result.status, 4, result.description)
        XCTAssertEqual(result.stdout, "ending by _exit\n")
        let trace = try RecordedTrace(url)
        // _exit runs no handler: the completed calls are there, the open ones cannot be.
        XCTAssertEqual(trace.calls(named: "step").count, 2, trace.tree)
        XCTAssertTrue(trace.calls(named: "step").allSatisfy { !$0.unfinished && $0.depth == 2 }, trace.tree)
        XCTAssertFalse(trace.trace.header.closedCleanly)
        XCTAssertFalse(trace.trace.header.crashed)
        XCTAssertFalse(trace.trace.warnings.isEmpty, "an unclosed trace says so")
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
        for mode in ["return", "exit", "_exit", "abort", "segv", "kill", "ill", "fpe", "overflow"] {
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
        XCTAssertEqual(result.stdout, "burst: \(Self.burstSum(calls))\n")
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.trace.header.drops, 0, "a 16M buffer holds 20000 records")
        let leaves = trace.calls(named: "leaf")
        XCTAssertEqual(leaves.count, calls, "every leaf call returned before the kill")
        XCTAssertTrue(leaves.allSatisfy { $0.depth == 2 && !$0.unfinished && !$0.unwound })
        XCTAssertEqual(trace.trace.records.count, calls, "main and burst were still open")
    }

    // MARK: - dlopen and dlclose

    func testDlopenedLibrariesSymbolicateAfterDlclose() throws {
        for compiler in Compiler.allCases {
            let shared = ["-O2", "-g", "-shared", "-fPIC"]
            let alpha = try Fixture.build(["plugin_a.c"], compiler: compiler, flags: shared, name: "libplugin_a.so")
            let beta = try Fixture.build(["plugin_b.c"], compiler: compiler, flags: shared, name: "libplugin_b.so")
            let host = try Fixture.build(["dlhost.c"], compiler: compiler)
            let (result, url) = try host.run([alpha.binary.path, beta.binary.path],
                                             environment: ["CALLTRACE_THRESHOLD": "1ms"])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            let expected = ["main",
                            "  call_plugin", "    alpha_work", "      alpha_inner", "  after_close",
                            "  call_plugin", "    beta_work", "      beta_inner", "  after_close",
                            "  call_plugin", "    alpha_work", "      alpha_inner", "  after_close"]
            XCTAssertEqual(trace.outline, expected, "\(compiler) (loaded at: \(result.stdout)):\n\(trace.tree)")
            let paths = trace.trace.modules.map(\.path)
            XCTAssertEqual(paths.filter { $0 == alpha.binary.path }.count, 2, "\(compiler): \(paths)")
            XCTAssertEqual(paths.filter { $0 == beta.binary.path }.count, 1, "\(compiler): \(paths)")
            XCTAssertTrue(trace.trace.modules.filter { $0.path.contains("libplugin") }.allSatisfy { $0.goneTick != nil },
                          "every plugin was unloaded: \(trace.trace.modules)")
            assertCost(trace.calls(named: "alpha_inner").first, atLeastMs: 2, below: 500, in: trace)
        }
    }

    // MARK: - Ring overflow

    func testRingOverflowDropsAndCountsRecordsButNeverBlocks() throws {
        let fixture = try Fixture.build(["burst.c"], compiler: .gcc)
        let calls = 100_000
        for buffer in ["8k", "64k"] {
            let start = Date()
            let (result, url) = try fixture.run(["\(calls)"], environment: ["CALLTRACE_THRESHOLD": "0",
                                                                            "CALLTRACE_BUFFER": buffer],
                                                traceName: "burst-\(buffer)")
            let elapsed = Date().timeIntervalSince(start)
            XCTAssertEqual(result.status, 0, "\(buffer): \(result)")
            XCTAssertEqual(result.stdout, "burst: \(Self.burstSum(calls))\n")
            XCTAssertLessThan(elapsed, 10, "\(buffer): the program must never wait for the disk")
            let trace = try RecordedTrace(url)
            let header = trace.trace.header
            // Two 4k blocks cannot keep up with this burst; 64k usually cannot either, but may.
            if buffer == "8k" { XCTAssertGreaterThan(header.drops, 0, "\(buffer): \(calls) records cannot fit") }
            // Nothing but the dropped records is missing: leaf × n, burst and main.
            XCTAssertEqual(UInt64(trace.trace.records.count) + header.drops, UInt64(calls + 2),
                           "\(buffer): \(trace.trace.records.count) records + \(header.drops) drops")
            let leaves = trace.calls(named: "leaf")
            XCTAssertTrue(leaves.allSatisfy { $0.depth == 2 && !$0.unfinished && !$0.unwound },
                          "\(buffer): every recorded leaf call is whole")
            XCTAssertTrue(trace.calls.allSatisfy { ["main", "burst", "leaf"].contains($0.name) },
                          "\(buffer): \(Set(trace.calls.map(\.name)))")
            XCTAssertTrue(header.closedCleanly)
            guard header.drops > 0 else { continue }
            XCTAssertTrue(trace.trace.warnings.contains { $0.contains("dropped") }, "\(trace.trace.warnings)")

            let info = try Command.run(Workspace.cli.path, ["info", url.path])
            XCTAssertEqual(info.status, 0, info.description)
            XCTAssertTrue(info.stdout.split(separator: "\n").contains { $0.hasPrefix("drops:") && $0.hasSuffix(" \(header.drops)") },
                          "\(buffer): info shows the drops:\n\(info.stdout)")
            let report = try Command.run(Workspace.cli.path, ["report", url.path])
            XCTAssertEqual(report.status, 0, report.description)
            XCTAssertTrue(report.stderr.contains("\(header.drops) calls were dropped"), "\(buffer): \(report.stderr)")
            XCTAssertFalse(report.stdout.contains("dropped"), "warnings go to stderr only")
        }
    }

    func testRingOverflowWithManyThreadsKeepsCountsConsistent() throws {
        let fixture = try Fixture.build(["burst.c"], compiler: .clang)
        let calls = 20_000, workers = 7
        for buffer in ["8k", "64k"] {
            let (result, url) = try fixture.run(["\(calls)", "threads", "\(workers)"],
                                                environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_BUFFER": buffer,
                                                              "CALLTRACE_THREADS": "all"],
                                                traceName: "burst-\(buffer)")
            XCTAssertEqual(result.status, 0, "\(buffer): \(result)")
            XCTAssertEqual(result.stdout, "burst: \((workers + 1) * Self.burstSum(calls))\n")
            let trace = try RecordedTrace(url)
            let header = trace.trace.header
            // leaf × n and burst on every thread, all_burst on each worker, main.
            let expected = (workers + 1) * (calls + 1) + workers + 1
            XCTAssertEqual(trace.trace.records.count + Int(header.drops), expected,
                           "\(buffer): \(trace.trace.records.count) records + \(header.drops) drops")
            XCTAssertGreaterThan(header.drops, 0, buffer)
            XCTAssertTrue(trace.calls(named: "leaf").allSatisfy { !$0.unfinished && !$0.unwound }, buffer)
            XCTAssertLessThanOrEqual(trace.trace.threads.count, workers + 1, "\(trace.trace.threads)")
            XCTAssertEqual(trace.trace.warnings.filter { !$0.contains("dropped") }, [], buffer)
        }
    }

    // MARK: - Bad settings

    func testInvalidSettingWarnsOnceAndUsesTheDefault() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .gcc)
        let cases: [(variable: String, value: String, check: (RecordedTrace) -> Void)] = [
            ("CALLTRACE_THRESHOLD", "fast", { t in
                XCTAssertEqual(t.trace.header.thresholdNs, 10_000_000)
                XCTAssertEqual(t.outline, ["main", "  slow_step"], t.tree) }),
            ("CALLTRACE_THRESHOLD", "-3ms", { t in XCTAssertEqual(t.trace.header.thresholdNs, 10_000_000) }),
            ("CALLTRACE_THREADS", "every", { t in
                XCTAssertFalse(t.trace.header.tracesAllThreads)
                XCTAssertTrue(t.calls(named: "worker_step").isEmpty, t.tree) }),
            ("CALLTRACE_MAX_DEPTH", "0", { t in XCTAssertEqual(t.trace.header.maxDepth, 4096) }),
            ("CALLTRACE_MAX_DEPTH", "9999999999", { t in XCTAssertEqual(t.trace.header.maxDepth, 4096) }),
            ("CALLTRACE_BUFFER", "1k", { t in XCTAssertEqual(t.trace.header.blockSize, 64 << 10) }), // 16M: 256 blocks of 64k
            ("CALLTRACE_BUFFER", "lots", { t in XCTAssertEqual(t.trace.header.blockSize, 64 << 10) }),
        ]
        for (variable, value, check) in cases {
            let (result, url) = try fixture.run(["6"], environment: [variable: value])
            XCTAssertEqual(result.status, 6, "\(variable)=\(value): \(result)")
            XCTAssertEqual(result.stdout, "settings: done\n")
            XCTAssertEqual(result.stderrLines.count, 1, "\(variable)=\(value): one warning:\n\(result.stderr)")
            XCTAssertTrue(result.stderr.contains(variable), "\(variable)=\(value): \(result.stderr)")
            let trace = try RecordedTrace(url)
            check(trace)
        }
    }

    func testInvalidOutputWarnsOnceAndUsesTheDefaultName() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .gcc)
        let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": ""])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("CALLTRACE_OUTPUT"), result.stderr)
        let files = traceFiles(in: fixture.directory)
        XCTAssertEqual(files.count, 1, "\(files)")
        XCTAssertTrue(files.first?.hasPrefix("calltrace-") ?? false, "the default name: \(files)")
        if let name = files.first {
            let trace = try RecordedTrace(fixture.directory.appendingPathComponent(name))
            XCTAssertEqual(name, "calltrace-\(trace.trace.header.pid).trace")
            XCTAssertEqual(trace.outline, ["main", "  slow_step"], trace.tree)
        }
    }

    func testSeveralInvalidSettingsWarnOnceEach() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .clang)
        let bad = ["CALLTRACE_THRESHOLD": "soon", "CALLTRACE_THREADS": "both", "CALLTRACE_MAX_DEPTH": "deep",
                   "CALLTRACE_BUFFER": "4k"]
        let (result, url) = try fixture.run(environment: bad)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stderrLines.count, bad.count, result.stderr)
        for variable in bad.keys {
            XCTAssertEqual(result.stderrLines.filter { $0.contains(variable) }.count, 1, "\(variable): \(result.stderr)")
        }
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.outline, ["main", "  slow_step"], trace.tree)
    }

    func testUnwritableOutputWarnsOnceAndRunsUntraced() throws {
        let output = "/nonexistent/dir/x.trace"
        let settings = try Fixture.build(["settings.c"], compiler: .gcc)
        let plain = try Fixture.build(["settings.c"], compiler: .gcc, wrapper: false, name: "settings_plain")
        let untraced = try Command.run(plain.binary.path, ["7"])
        for threads in ["main", "all"] {
            let (result, _) = try settings.run(["7"], environment: ["CALLTRACE_OUTPUT": output,
                                                                    "CALLTRACE_THREADS": threads])
            XCTAssertEqual(result.status, untraced.status, "\(threads): \(result)")
            XCTAssertEqual(result.stdout, untraced.stdout, threads)
            XCTAssertEqual(result.stderrLines.count, 1, "\(threads): one warning:\n\(result.stderr)")
            XCTAssertTrue(result.stderr.contains(output), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/nonexistent"))

        // A child of fork does not try (and warn) again.
        let fork = try Fixture.build(["fork.c"], compiler: .gcc)
        let (result, _) = try fork.run(environment: ["CALLTRACE_OUTPUT": output])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertNotNil(pid(after: "child", in: result.stdout), result.stdout)
        XCTAssertNotNil(pid(after: "parent", in: result.stdout), result.stdout)
        XCTAssertEqual(result.stderrLines.count, 1, "one warning for parent and child:\n\(result.stderr)")
        XCTAssertEqual(traceFiles(in: fork.directory), [])
    }

    // MARK: - Security

    func testTraceFileIsCreatedWithMode0600() throws {
        let fixture = try Fixture.build(["secure.c"], compiler: .gcc)
        let trace = fixture.directory.appendingPathComponent("mode.trace")
        // Even under umask 0 the trace is for its owner only.
        let result = try Command.run("/bin/sh", ["-c", "umask 0; exec \"$0\"", fixture.binary.path],
                                     environment: ["CALLTRACE_OUTPUT": trace.path],
                                     currentDirectory: fixture.directory)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(fileMode(trace).map { String($0, radix: 8) }, "600")
        XCTAssertEqual(try RecordedTrace(trace).outline, ["main", "  slow_step"])
    }

    func testTraceNeverFollowsASymlinkPlantedAtItsPath() throws {
        let fixture = try Fixture.build(["secure.c"], compiler: .gcc)
        let dir = fixture.directory
        let victim = dir.appendingPathComponent("victim.txt")
        let original = Data("precious victim data\n".utf8)
        try original.write(to: victim)
        let victimMode = fileMode(victim)
        let link = dir.appendingPathComponent("out.trace")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
        // A dangling link too: it must not create its target.
        let missing = dir.appendingPathComponent("not-there.txt")
        let dangling = dir.appendingPathComponent("dangling.trace")
        try FileManager.default.createSymbolicLink(at: dangling, withDestinationURL: missing)

        for (path, label) in [(link, "link to victim"), (dangling, "dangling link")] {
            let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": path.path])
            XCTAssertEqual(result.status, 0, "\(label): \(result)")
            XCTAssertTrue(isSymlink(path), "\(label): the link is left alone")
            let alternative = dir.appendingPathComponent(path.deletingPathExtension().lastPathComponent + "-1.trace")
            XCTAssertFalse(isSymlink(alternative))
            XCTAssertEqual(try RecordedTrace(alternative).outline, ["main", "  slow_step"], label)
        }
        XCTAssertEqual(contents(of: victim), original, "the victim is unchanged")
        XCTAssertEqual(fileMode(victim), victimMode, "the victim's mode is unchanged")
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing.path), "the dangling link's target was created")
    }

    func testTraceNeverReplacesAnExistingFile() throws {
        let fixture = try Fixture.build(["secure.c"], compiler: .gcc)
        let dir = fixture.directory
        let taken = dir.appendingPathComponent("out.trace"), alsoTaken = dir.appendingPathComponent("out-1.trace")
        let first = Data("not a trace, not yours\n".utf8), second = Data("nor this one\n".utf8)
        try first.write(to: taken)
        try second.write(to: alsoTaken)
        let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": taken.path])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stderr, "", "taking the next free name is not worth a warning")
        XCTAssertEqual(contents(of: taken), first)
        XCTAssertEqual(contents(of: alsoTaken), second)
        XCTAssertEqual(traceFiles(in: dir), ["out-1.trace", "out-2.trace", "out.trace"])
        XCTAssertEqual(try RecordedTrace(dir.appendingPathComponent("out-2.trace")).outline, ["main", "  slow_step"])
    }

    /// A set-uid program must ignore CALLTRACE_* (the runtime reads them with secure_getenv). As
    /// root, running a program set-uid to nobody makes euid != ruid, so the kernel sets AT_SECURE.
    func testSetuidProgramIgnoresCalltraceSettings() throws {
        guard let nobody = getpwnam("nobody")?.pointee.pw_uid else { throw XCTSkip("no user nobody") }
        try assertSettingsIgnored(owner: nobody, group: 0, mode: 0o4755, expect: "euid \(nobody) ")
    }

    /// The same for set-gid: egid != rgid sets AT_SECURE too.
    func testSetgidProgramIgnoresCalltraceSettings() throws {
        guard let nogroup = getgrnam("nogroup")?.pointee.gr_gid else { throw XCTSkip("no group nogroup") }
        try assertSettingsIgnored(owner: 0, group: nogroup, mode: 0o2755, expect: "egid \(nogroup) ")
    }

    /// Runs a copy of secure.c owned by owner:group with `mode` in a directory anyone may write to,
    /// with CALLTRACE_* set: the trace must be the default one (calltrace-<pid>.trace, 10 ms).
    private func assertSettingsIgnored(owner: uid_t, group: gid_t, mode: mode_t, expect: String,
                                       file: StaticString = #filePath, line: UInt = #line) throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to make a set-id program owned by someone else") }
        let fixture = try Fixture.build(["secure.c"], compiler: .gcc, file: file, line: line)
        let dir = Workspace.directory("setid")
        XCTAssertEqual(chmod(dir.path, 0o777), 0, file: file, line: line)
        let binary = dir.appendingPathComponent("secure")
        try FileManager.default.copyItem(at: fixture.binary, to: binary)
        // chown first: it clears the set-id bits.
        guard chown(binary.path, owner, group) == 0, chmod(binary.path, mode) == 0 else {
            throw XCTSkip("cannot make a set-id program here: \(String(cString: strerror(errno)))")
        }
        let ignored = dir.appendingPathComponent("ignored.trace")
        let result = try Command.run(binary.path, [], environment: [
            "CALLTRACE_OUTPUT": ignored.path, "CALLTRACE_THRESHOLD": "0", "CALLTRACE_THREADS": "bogus"],
            currentDirectory: dir)
        XCTAssertEqual(result.status, 0, result.description, file: file, line: line)
        guard result.stdout.contains(expect) else {
            throw XCTSkip("the set-id bit had no effect here (nosuid mount?): \(result.stdout)")
        }
        XCTAssertEqual(result.stderr, "", "ignored settings are not even parsed", file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ignored.path), "CALLTRACE_OUTPUT was used",
                       file: file, line: line)
        let files = traceFiles(in: dir)
        XCTAssertEqual(files.count, 1, "the default trace name: \(files)", file: file, line: line)
        guard let name = files.first else { return }
        let url = dir.appendingPathComponent(name)
        let trace = try RecordedTrace(url, file: file, line: line)
        XCTAssertEqual(name, "calltrace-\(trace.trace.header.pid).trace", file: file, line: line)
        XCTAssertEqual(trace.trace.header.thresholdNs, 10_000_000, "CALLTRACE_THRESHOLD was used", file: file, line: line)
        XCTAssertEqual(trace.outline, ["main", "  slow_step"], trace.tree, file: file, line: line)
        XCTAssertEqual(fileMode(url).map { String($0, radix: 8) }, "600", file: file, line: line)
        var info = stat()
        XCTAssertEqual(stat(url.path, &info), 0, file: file, line: line)
        XCTAssertEqual(info.st_uid, owner, "the trace belongs to the effective user", file: file, line: line)
    }

    // MARK: - Helpers

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

    /// What burst.c prints for `n` calls: the sum of 7i + 1.
    private static func burstSum(_ n: Int) -> Int { 7 * (n * (n - 1) / 2) + n }

    /// The number after `label ` at the start of a line of `output` ("parent 123").
    private func pid(after label: String, in output: String) -> Int32? {
        for line in output.split(separator: "\n") where line.hasPrefix(label + " ") {
            return Int32(line.dropFirst(label.count + 1))
        }
        return nil
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
