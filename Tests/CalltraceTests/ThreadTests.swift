import CalltraceKit
import Foundation
import XCTest

/// Threads: which are recorded, each in its own tree, and what happens to their open calls when a
/// thread or the process ends under them.
final class ThreadTests: XCTestCase {
    /// 150 threads cancelled asynchronously inside instrumented calls (the cancel lands anywhere,
    /// the hooks and the runtime's calibration included), every thread recorded at 1 ms with
    /// every hook kept: each cancelled thread's open calls are in the trace as unfinished, and
    /// nothing was dropped.
    func testAsynchronouslyCancelledThreadsKeepTheirOpenCalls() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["async_cancel.c"], compiler: compiler)
            let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "1ms", "CALLTRACE_THREADS": "all",
                                                              "CALLTRACE_MUTE": "off"], timeout: 120)
            assertDidNotHang(result, "\(compiler)")
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            XCTAssertEqual(result.stdout, "async_cancel: 150 cancelled\n", "\(compiler)")
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.trace.header.lost, 0, "\(compiler): lost bits")
            let workers = trace.trace.threads.filter { $0.tid != trace.trace.header.pid }
            XCTAssertEqual(workers.count, 150, "\(compiler): \(trace.trace.threads.count) threads")
            for thread in workers {
                let open = trace.calls(inStream: thread.stream).filter(\.unfinished).map(\.name)
                XCTAssertTrue(open.contains("worker") && open.contains("work"),
                              "\(compiler): thread \(thread.tid) ends with open calls \(open):\n" +
                              trace.outline(ofStream: thread.stream).joined(separator: "\n"))
            }
        }
    }

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
            // The worker waits until main is inside main_wait, then 40 ms: far over the 10 ms threshold.
            assertCost(trace.calls(named: "main_wait").first, atLeastMs: 40, below: 2000, in: trace)
            if threads == "all" {
                XCTAssertEqual(trace.calls(named: "worker_end").first?.unfinished, true, trace.tree)
                assertCost(trace.calls(named: "worker_end").first, atLeastMs: 65, below: 2000, in: trace)
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
}
