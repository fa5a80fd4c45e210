import CalltraceKit
import Foundation
import XCTest

/// The program's life is untouchable: however it starts threads and processes, changes its own
/// namespaces or CPU features, or ends, it behaves as untraced; the trace keeps what it can.
final class ProcessLifeTests: XCTestCase {
    // MARK: - Threads

    /// main ends with pthread_exit while workers run: the process lives on until the last worker
    /// ends and exits 0, as untraced; a hang fails the test through the timeout.
    func testPthreadExitFromMainWhileWorkersRunExitsAsUntraced() throws {
        for compiler in Compiler.allCases {
            let plain = try Fixture.build(["main_exit.c"], compiler: compiler, wrapper: false, name: "main_exit_plain")
            let traced = try Fixture.build(["main_exit.c"], compiler: compiler)
            let untraced = try Command.run(plain.binary.path, [], timeout: 60)
            assertDidNotHang(untraced, "untraced")
            XCTAssertEqual(untraced.status, 0, untraced.description)
            for threads in ["main", "all"] {
                let label = "\(compiler) threads=\(threads)"
                let (result, url) = try traced.run(environment: ["CALLTRACE_THREADS": threads], timeout: 20)
                assertDidNotHang(result, label)
                if result.timedOut { return }  // one hang is the answer; the others would cost 20 s each
                XCTAssertEqual(result.status, untraced.status, "\(label): \(result)")
                XCTAssertEqual(result.stdout, untraced.stdout, label)
                let trace = try RecordedTrace(url)
                XCTAssertEqual(trace.calls(named: "main_step").count, 1, "\(label):\n\(trace.tree)")
                if threads == "all" {
                    XCTAssertEqual(trace.calls(named: "worker_job").count, 2, "\(label):\n\(trace.tree)")
                }
            }
        }
    }

    /// The last program thread ends with the raw exit system call while the drain thread runs: the
    /// process ends as untraced (its status is its last thread's), and its trace is closed with the
    /// calls left open recorded as unfinished. With a worker that outlives main, the drain thread
    /// must not outlive the worker; the worker's calls still reach the trace with `all`.
    func testRawExitOfTheLastThreadEndsTheProcessAsUntraced() throws {
        for compiler in Compiler.allCases {
            let plain = try Fixture.build(["raw_exit.c"], compiler: compiler, wrapper: false, name: "raw_exit_plain")
            let traced = try Fixture.build(["raw_exit.c"], compiler: compiler)
            for mode in ["main", "workers"] {
                let untraced = try Command.run(plain.binary.path, [mode], timeout: 60)
                assertDidNotHang(untraced, "untraced \(mode)")
                XCTAssertEqual(untraced.status, mode == "main" ? 7 : 5, untraced.description)
                for threads in ["main", "all"] {
                    let label = "\(compiler) \(mode) threads=\(threads)"
                    let (result, url) = try traced.run([mode], environment: ["CALLTRACE_THREADS": threads],
                                                       traceName: "\(mode)-\(threads)", timeout: 20)
                    assertDidNotHang(result, label)
                    if result.timedOut { return }  // one hang is the answer; the others would cost 20 s each
                    XCTAssertEqual(result.status, untraced.status, "\(label): \(result)")
                    XCTAssertEqual(result.stdout, untraced.stdout, label)
                    XCTAssertEqual(result.stderr, "", label)
                    let trace = try RecordedTrace(url)
                    let context = "\(label):\n\(trace.tree)"
                    XCTAssertEqual(trace.calls(named: "step").count, 1, context)
                    XCTAssertEqual(trace.calls(named: "main").map(\.unfinished), [true], context)
                    // Named: the program's path is still known once its main thread is gone.
                    XCTAssertEqual(trace.calls.filter { $0.name.hasPrefix("+0x") }.map(\.name), [], context)
                    if mode == "main" {
                        XCTAssertTrue(trace.trace.header.closedCleanly, context)
                    } else if threads == "all" {
                        XCTAssertEqual(trace.calls(named: "worker_job").count, 1, context)
                    }
                }
            }
        }
    }

    /// 2000 threads that each record a few calls: the trace does not cost a block per thread.
    func testManyShortLivedRecordingThreadsKeepTheTraceSmall() throws {
        let fixture = try Fixture.build(["many_threads.c"], compiler: .gcc)
        let (result, url) = try fixture.run(["10", "200"], environment: ["CALLTRACE_THREADS": "all",
                                                                         "CALLTRACE_THRESHOLD": "0"],
                                            timeout: 300)
        assertDidNotHang(result)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stdout, "many_threads: 2000\n")
        let size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        XCTAssertLessThan(size, 8 << 20, "\(size) bytes for 2000 threads of two calls each (2000 x 64 KiB is 125 MiB)")
        var info = stat()
        XCTAssertEqual(stat(url.path, &info), 0)
        XCTAssertLessThan(Int(info.st_blocks) * 512, 8 << 20, "\(info.st_blocks) blocks of 512 bytes")
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.trace.header.drops, 0)
        XCTAssertEqual(trace.calls(named: "job").count, 2000, "every thread's calls are there")
        XCTAssertEqual(trace.calls(named: "pool_thread").count, 2000)
        XCTAssertEqual(Set(trace.calls(named: "job").map(\.stream)).count, 2000, "each thread in its own stream")
    }

    // MARK: - fork and vfork

    /// fork while another thread is inside dlopen or dlclose: the loader's locks are held in the
    /// child, so a child that took them (in a fork handler, or to read the module list) would hang.
    func testForkWhileAnotherThreadIsInDlopenDoesNotDeadlockTheChild() throws {
        for compiler in Compiler.allCases {
            let library = try Fixture.build(["plugin_a.c"], compiler: compiler, flags: ["-O2", "-g", "-shared", "-fPIC"],
                                            name: "libplugin_a.so")
            let fixture = try Fixture.build(["forkdl.c"], compiler: compiler)
            for threads in ["main", "all"] {
                let label = "\(compiler) threads=\(threads)"
                let template = fixture.directory.appendingPathComponent("forkdl-\(threads)-%p.trace").path
                let (result, _) = try fixture.run([library.binary.path, "40"],
                                                  environment: ["CALLTRACE_OUTPUT": template, "CALLTRACE_THRESHOLD": "0",
                                                                "CALLTRACE_THREADS": threads],
                                                  timeout: 300)
                assertDidNotHang(result, label)
                XCTAssertEqual(result.status, 0, "\(label): \(result)")
                XCTAssertEqual(result.stdout, "forkdl: 40 children, 0 hung, 0 failed\n", label)
                if result.status != 0 { return }  // a child hung (10 s): the other runs would only repeat it
                // Every child's trace reads.
                let traces = traceFiles(in: fixture.directory).filter { $0.hasPrefix("forkdl-\(threads)-") }
                XCTAssertEqual(traces.count, 41, "\(label): the parent's and 40 children's: \(traces)")
                for name in traces {
                    XCTAssertNoThrow(try TraceReader.read(path: fixture.directory.appendingPathComponent(name).path),
                                     "\(label): \(name)")
                }
            }
        }
    }

    /// A vfork child runs on the parent's memory (and thread state) until it exits: its calls must
    /// not land in the parent's trace, and neither its _exit() nor its exit() (which runs the
    /// parent's exit handlers, the runtime's among them) may close the parent's trace.
    func testVforkChildNeitherRecordsIntoNorClosesTheParentsTrace() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["vfork.c"], compiler: compiler)
            for mode in ["_exit", "exit"] {
                let label = "\(compiler) \(mode)"
                let (result, url) = try fixture.run([mode], environment: ["CALLTRACE_THRESHOLD": "10ms"], timeout: 60)
                assertDidNotHang(result, label)
                XCTAssertEqual(result.status, 0, "\(label): \(result)")
                XCTAssertEqual(result.stdout, "vfork: children 0 0\n", label)
                let trace = try RecordedTrace(url)
                let context = "\(label):\n\(trace.tree)"
                // run_child waits (suspended by vfork) for a 12 ms child: slow enough to be recorded.
                XCTAssertEqual(trace.outline.filter { $0 != "  run_child" }, ["main", "  before_vfork", "  after_vfork"],
                               context)
                XCTAssertEqual(trace.calls(named: "child_call").count, 0,
                               "the children's calls are in the parent's trace; \(context)")
                XCTAssertFalse(trace.trace.header.crashed, context)
                assertCost(trace.calls(named: "after_vfork").first, atLeastMs: 15, below: 1000, in: trace)
                XCTAssertTrue(trace.calls.allSatisfy { !$0.unfinished && !$0.unwound }, context)
                XCTAssertTrue(trace.trace.header.closedCleanly,
                              "the parent's trace was not closed by the parent; \(context)")
            }
        }
    }

    // MARK: - Namespaces and CPU features

    /// The tree unshare.c makes with either call in the middle.
    private static let namespaceOutline = ["main", "  before_step", "  after_step", "  after_step_2"]

    /// unshare(CLONE_NEWUSER) fails with EINVAL in a multi-threaded process: under the runtime it
    /// must succeed exactly when it does untraced, and recording goes on after it.
    func testUnshareOfTheUserNamespaceBehavesAsUntraced() throws {
        let plain = try Fixture.build(["unshare.c"], compiler: .gcc, wrapper: false, name: "unshare_plain")
        let traced = try Fixture.build(["unshare.c"], compiler: .gcc)
        let untraced = try Command.run(plain.binary.path, ["unshare"], timeout: 60)
        XCTAssertEqual(untraced.status, 0, untraced.description)
        for threads in ["main", "all"] {
            let (result, url) = try traced.run(["unshare"], environment: ["CALLTRACE_THREADS": threads], timeout: 60)
            XCTAssertEqual(result.status, untraced.status, "\(threads): \(result)")
            XCTAssertEqual(result.stdout, untraced.stdout, "\(threads): unshare went otherwise than untraced")
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.outline, Self.namespaceOutline, "\(threads):\n\(trace.tree)")
        }
    }

    /// prctl(PR_SET_TSC, PR_TSC_SIGSEGV) makes rdtsc fault: the program runs on, and the calls
    /// after it are recorded with costs a clock that still works gives.
    func testDisablingTheTimestampCounterDoesNotKillTheProgram() throws {
        let plain = try Fixture.build(["unshare.c"], compiler: .gcc, wrapper: false, name: "unshare_plain")
        let untraced = try Command.run(plain.binary.path, ["tsc"], timeout: 60)
        guard untraced.stdout.hasPrefix("tsc: ok\n") else { throw XCTSkip("no PR_SET_TSC here: \(untraced)") }
        for compiler in Compiler.allCases {
            let traced = try Fixture.build(["unshare.c"], compiler: compiler)
            for threads in ["main", "all"] {
                let label = "\(compiler) threads=\(threads)"
                let (result, url) = try traced.run(["tsc"], environment: ["CALLTRACE_THREADS": threads], timeout: 60)
                XCTAssertNil(result.signal, "\(label): \(result)")
                XCTAssertEqual(result.status, untraced.status, "\(label): \(result)")
                XCTAssertEqual(result.stdout, untraced.stdout, label)
                let trace = try RecordedTrace(url)
                XCTAssertEqual(trace.outline, Self.namespaceOutline, "\(label):\n\(trace.tree)")
                assertCost(trace.calls(named: "after_step").first, atLeastMs: 15, below: 1000, in: trace)
                assertCost(trace.calls(named: "after_step_2").first, atLeastMs: 12, below: 1000, in: trace)
                assertCost(trace.calls(named: "main").first, atLeastMs: 39, below: 3000, in: trace)
            }
        }
    }

    // MARK: - Stack overflow

    /// Unbounded recursion: the process dies of SIGSEGV as untraced, and (on an alternate signal
    /// stack) the runtime records the crash and the open calls.
    func testStackOverflowIsRecordedAsACrash() throws {
        let plain = try Fixture.build(["exit_paths.c"], compiler: .gcc, wrapper: false, name: "exit_paths_plain")
        let untraced = try Command.run(plain.binary.path, ["overflow"], currentDirectory: plain.directory, timeout: 120)
        XCTAssertEqual(untraced.signal, SIGSEGV, untraced.description)
        for compiler in Compiler.allCases {
            let traced = try Fixture.build(["exit_paths.c"], compiler: compiler)
            let (result, url) = try traced.run(["overflow"], timeout: 120)
            XCTAssertEqual(result.status, untraced.status, "\(compiler): \(result)")
            XCTAssertEqual(result.stdout, untraced.stdout, "\(compiler)")
            let trace = try RecordedTrace(url)
            let context = "\(compiler):\n\(trace.outline.prefix(20).joined(separator: "\n"))"
            XCTAssertTrue(trace.trace.header.crashed, "not flagged crashed; \(context)")
            XCTAssertEqual(trace.trace.header.signal, UInt64(SIGSEGV), context)
            XCTAssertEqual(trace.calls(named: "step").count, 2, context)
            for name in ["main", "outer", "inner", "terminate"] {
                XCTAssertEqual(trace.calls(named: name).first?.unfinished, true, "\(name) open at the crash; \(context)")
            }
        }
    }

    // MARK: - start-up

    /// At a threshold the trace opens with the metadata stream's block alone, its spares made a
    /// little later (docs/design.md, "Start-up"): a command line too long for that block (cut to
    /// it) makes the opener wait for them before writing its records, so the modules that name the
    /// calls are there all the same and no metadata is lost.
    func testCommandLineFillingTheFirstBlockStillLeavesTheCallsNamed() throws {
        let fixture = try Fixture.build(["main_exit.c"], compiler: .gcc)
        // Long arguments: the PROCESS record then fills its block almost to the byte.
        let arguments = (0..<30).map { String(repeating: String(format: "a%04d", $0), count: 200) }
        let (result, url) = try fixture.run(arguments, environment: ["CALLTRACE_THRESHOLD": "10ms",
                                                                     "CALLTRACE_BUFFER": "4M"])
        XCTAssertEqual(result.status, 0, result.description)
        let trace = try RecordedTrace(url)
        let header = trace.trace.header
        XCTAssertEqual(header.blockSize, 16 << 10, "the smallest blocks, so the command line fills one")
        XCTAssertNotEqual(header.lost & TraceFormat.Lost.argsCut, 0, "the command line was cut to one block")
        XCTAssertEqual(header.lost & TraceFormat.Lost.metadata, 0, "no metadata record lost")
        XCTAssertTrue(trace.trace.modules.contains { $0.path.contains("/libc.so") }, "\(trace.trace.modules)")
        XCTAssertEqual(trace.calls(named: "main_step").count, 1, trace.tree)
    }

    // MARK: - Start-up

    /// An instrumented function in .preinit_array (Fixtures/preinit.c) runs before libc's start-up
    /// and the runtime's constructor: the environment is not there yet, so its hooks cannot start
    /// the runtime (they used to, finding no setting: no trace at all, and no word of why), and a
    /// build with sleds has not patched them yet. The trace holds the rest, says that the early
    /// calls are missing (lost bit 11), and the runtime warns once on stderr; without a setting,
    /// nothing is said.
    func testAnInstrumentedPreinitFunctionLeavesATraceAndAWarning() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["preinit.c"], compiler: compiler)
            let untraced = try fixture.runUntraced()
            XCTAssertEqual(untraced.stdout, "main\n", "\(compiler): \(untraced)")
            XCTAssertEqual(untraced.stderr, "", "\(compiler): nothing asked, nothing said")
            let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            XCTAssertEqual(result.stdout, untraced.stdout, "\(compiler)")
            let warnings = result.stderr.split(separator: "\n")
            XCTAssertEqual(warnings.count, 1, "\(compiler): \(result.stderr)")
            XCTAssertTrue(warnings.first?.hasPrefix("calltrace: warning: instrumented code ran before the runtime started "
                                                    + "(a .preinit_array function") ?? false, "\(compiler): \(result.stderr)")
            let trace = try RecordedTrace(url)
            XCTAssertNotEqual(trace.trace.header.lost & TraceFormat.Lost.early, 0, "\(compiler)")
            XCTAssertTrue(trace.trace.warnings.contains { $0.hasPrefix("calls made before the runtime started are not in the trace") },
                          "\(compiler): \(trace.trace.warnings)")
            XCTAssertEqual(trace.outline, ["main", "  slow"], "\(compiler): main's call only:\n\(trace.tree)")
        }
    }
}
