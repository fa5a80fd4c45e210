import CalltraceKit
import Foundation
import XCTest

/// Calls made on another stack than the thread's own (a handler on an alternate signal stack, a
/// coroutine from makecontext, even one whose stack is an array in an open frame) must neither kill
/// the program nor close the calls open on the thread's stack: the program runs as untraced, and no
/// call of the thread's own is marked unwound.
final class OtherStackTests: XCTestCase {
    /// An instrumented handler on a sigaltstack: a malloc'ed one on the main thread, and on a worker
    /// one mmap'ed before the worker started (so above the worker's stack, where a slot search
    /// that compares addresses on one stack would take every open call for gone).
    func testHandlerOnAnAlternateSignalStackKeepsTheThreadsCalls() throws {
        for compiler in Compiler.allCases {
            let (plain, traced) = try buildBoth("altstack_handler.c", compiler)
            for (mode, threads) in [("main", "main"), ("thread", "all")] {
                let label = "\(compiler) \(mode)"
                guard let trace = try runAsUntraced(plain, traced, [mode], threads: threads, label: label) else { continue }
                let context = "\(label):\n\(trace.tree)"
                XCTAssertEqual(trace.calls(named: "handler").count, 3, context)
                XCTAssertEqual(trace.calls(named: "inner").count, 3, context)
                assertEveryCall(named: "inner", isUnder: "handler", in: trace, context)
                XCTAssertEqual(trace.calls(named: "work").count, 1, context)
                XCTAssertEqual(trace.calls.filter(\.unwound).map(\.name), [], context)
                XCTAssertEqual(trace.calls.filter(\.unfinished).map(\.name), [], context)
            }
        }
    }

    /// SA_ONSTACK handlers in a program that set no alternate stack run on the runtime's own: an
    /// instrumented one on the main thread and on a worker, and an uninstrumented one whose 128 KiB
    /// local array needs a stack as large as a thread's.
    func testSaOnstackHandlersWithoutTheProgramsOwnAlternateStackRunAsUntraced() throws {
        for compiler in Compiler.allCases {
            let (plain, traced) = try buildBoth("onstack_handler.c", compiler)
            for mode in ["main", "thread", "big"] {
                let label = "\(compiler) \(mode)"
                guard let trace = try runAsUntraced(plain, traced, [mode], threads: "all", label: label) else { continue }
                let context = "\(label):\n\(trace.tree)"
                XCTAssertEqual(trace.calls(named: "work").count, 1, context)
                XCTAssertEqual(trace.calls(named: "inner").count, mode == "big" ? 0 : 1, context)
                if mode != "big" { assertEveryCall(named: "inner", isUnder: "handler", in: trace, context) }
                XCTAssertEqual(trace.calls.filter(\.unwound).map(\.name), [], context)
            }
        }
    }

    /// makecontext/swapcontext coroutines: on the main thread with a malloc'ed stack the coroutine
    /// is left and resumed half way; on a worker its stack was mmap'ed before the worker started (so
    /// it may lie above the worker's stack); on the main thread with the stack an array in main's
    /// own frame (so on the thread's stack, inside a live frame), resumed from main. The calls that
    /// switched away are not unwound, main's later calls are at their depth, and the coroutine's
    /// calls are in the tree.
    func testCoroutinesOnTheirOwnStacksKeepTheCallersCalls() throws {
        for compiler in Compiler.allCases {
            let (plain, traced) = try buildBoth("coroutines.c", compiler)
            for mode in ["malloc", "mmap", "frame"] {
                let label = "\(compiler) \(mode)"
                guard let trace = try runAsUntraced(plain, traced, [mode], threads: "all", label: label) else { continue }
                let context = "\(label):\n\(trace.tree)"
                XCTAssertEqual(trace.calls(named: "run").count, 1, context)
                if mode == "mmap" { XCTAssertEqual(trace.calls(named: "outer").count, 1, context) }
                if mode == "frame" {
                    XCTAssertEqual(trace.calls(named: "after").count, 2, context)
                    assertEveryCall(named: "after", isUnder: "main", in: trace, context)
                    assertEveryCall(named: "outer", isUnder: "main", in: trace, context)
                }
                for name in ["main", "outer", "run", "worker", "after"] {
                    XCTAssertTrue(trace.calls(named: name).allSatisfy { !$0.unwound }, "\(name) unwound; \(context)")
                }
                XCTAssertEqual(trace.calls(named: "leaf").count, 2, context)
                XCTAssertGreaterThanOrEqual(trace.calls(named: "coroutine").count, 1, context)
            }
        }
    }

    /// Two coroutines ping-ponging with swapcontext, their stacks local arrays in main's own frame
    /// (main's first instrumented call being the first coroutine's), in the frame of a function
    /// deeper down that runs them, or malloc'ed; one on main's frame that ends through uc_link to a
    /// context getcontext saved in main, a switch no wrapper sees; and one on main's frame that
    /// longjmps within itself. At 1 ms and at 0: the switches are followed (docs/design.md,
    /// "Coroutines"), so the calls the host makes after the coroutines ran are at its depth, under
    /// it; nothing of main's is unwound; every slow call of the coroutines is there with its own
    /// cost; and the jump inside a coroutine closes the frames it left, and those only.
    func testCoroutinesOnLocalStacksKeepTheHostsDepth() throws {
        for compiler in Compiler.allCases {
            let (plain, traced) = try buildBoth("coroutine_stacks.c", compiler)
            for mode in ["main", "deeper", "heap", "link", "jump"] {
                for threshold in ["1ms", "0"] {
                    let label = "\(compiler) \(mode) \(threshold)"
                    guard let trace = try runAsUntraced(plain, traced, [mode], threads: "main", threshold: threshold,
                                                        label: label) else { continue }
                    let context = "\(label):\n\(trace.tree)"
                    let host = mode == "deeper" ? "runner" : "main"
                    XCTAssertEqual(trace.calls(named: "main").count, 1, context)
                    if mode == "deeper" {
                        XCTAssertEqual(trace.calls(named: "runner").count, 1, context)
                        assertEveryCall(named: "runner", isUnder: "main", in: trace, context)
                    }
                    // The host's own calls, after the coroutines ran: at its depth, under it.
                    XCTAssertEqual(trace.calls(named: "main_work").count, 1, context)
                    assertEveryCall(named: "main_work", isUnder: host, in: trace, context)
                    XCTAssertEqual(trace.calls(named: "main_work").map(\.depth), [host == "main" ? 1 : 2], context)
                    XCTAssertEqual(trace.calls(named: "after").count, 2, context)
                    assertEveryCall(named: "after", isUnder: "main", in: trace, context)
                    XCTAssertEqual(trace.calls(named: "after").map(\.depth), [1, 1], context)
                    for name in ["main", "runner", "main_work", "after"] {
                        XCTAssertTrue(trace.calls(named: name).allSatisfy { !$0.unwound }, "\(name) unwound; \(context)")
                    }
                    XCTAssertEqual(trace.calls.filter(\.unfinished).map(\.name), [], context)
                    // The coroutines' slow calls: all there, each with its own sleep's cost, under
                    // its coroutine or, resumed, under the host that resumed it.
                    let alone = mode == "link" || mode == "jump"
                    let coroutineWork = alone ? ["ping_work"] : ["ping_work", "pong_work"]
                    for name in coroutineWork {
                        XCTAssertEqual(trace.calls(named: name).count, 3, "\(name); \(context)")
                        for call in trace.calls(named: name) {
                            assertCost(call, atLeastMs: 3, below: 1000, in: trace)
                            let above = call.parent.map { trace.calls[$0].name }
                            XCTAssertTrue([name.replacingOccurrences(of: "_work", with: ""), host].contains(above),
                                          "\(name) under \(above ?? "nothing"); \(context)")
                        }
                    }
                    for name in coroutineWork {
                        XCTAssertTrue(trace.calls(named: name).allSatisfy { !$0.unwound }, "\(name) unwound; \(context)")
                    }
                    if mode == "jump" {
                        // The jump out of deep, within the coroutine's stack: middle and deep are
                        // closed, unwound, under ping; ping goes on.
                        assertEveryCall(named: "middle", isUnder: "ping", in: trace, context)
                        assertEveryCall(named: "deep", isUnder: "middle", in: trace, context)
                        for name in ["middle", "deep"] {
                            XCTAssertEqual(trace.calls(named: name).map(\.unwound), [true], "\(name); \(context)")
                            assertCost(trace.calls(named: name).first, atLeastMs: 2, below: 1000, in: trace)
                        }
                        assertEveryCall(named: "ping_work", isUnder: "ping", in: trace, context)
                    }
                    assertCost(trace.calls(named: "after").first, atLeastMs: 5, below: 1000, in: trace)
                    assertCost(trace.calls(named: "main").first, atLeastMs: alone ? 22 : 31, below: 5000, in: trace)
                }
            }
        }
    }

    // MARK: - Helpers

    /// The fixture without the runtime (the program's own behaviour) and with it.
    private func buildBoth(_ source: String, _ compiler: Compiler) throws -> (plain: Fixture, traced: Fixture) {
        let base = (source as NSString).deletingPathExtension
        let plain = try Fixture.build([source], compiler: compiler, wrapper: false, name: "\(base)_plain")
        return (plain, try Fixture.build([source], compiler: compiler))
    }

    /// Runs `plain` and then `traced` (every call recorded): the traced run must end and print as
    /// the plain one did, with status 0. Returns the trace, or nil when the run already failed.
    private func runAsUntraced(_ plain: Fixture, _ traced: Fixture, _ arguments: [String], threads: String,
                               threshold: String = "0", label: String, file: StaticString = #filePath,
                               line: UInt = #line) throws -> RecordedTrace? {
        let untraced = try Command.run(plain.binary.path, arguments, timeout: 60)
        XCTAssertEqual(untraced.status, 0, "\(label) untraced: \(untraced)", file: file, line: line)
        let (result, url) = try traced.run(arguments, environment: ["CALLTRACE_THRESHOLD": threshold, "CALLTRACE_THREADS": threads],
                                           traceName: (arguments + [threshold]).joined(separator: "-"), timeout: 60)
        assertDidNotHang(result, label, file: file, line: line)
        XCTAssertEqual(result.status, untraced.status, "\(label): \(result)", file: file, line: line)
        XCTAssertEqual(result.stdout, untraced.stdout, label, file: file, line: line)
        guard result.status == 0 else { return nil }
        return try RecordedTrace(url, file: file, line: line)
    }

    private func assertEveryCall(named name: String, isUnder parent: String, in trace: RecordedTrace, _ context: String,
                                 file: StaticString = #filePath, line: UInt = #line) {
        for (i, call) in trace.calls.enumerated() where call.name == name {
            let above = call.parent.map { trace.calls[$0].name }
            XCTAssertEqual(above, parent, "call \(i), \(name), not under \(parent); \(context)", file: file, line: line)
        }
    }
}
