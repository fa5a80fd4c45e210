import CalltraceKit
import Foundation
import XCTest

/// Calls made on another stack than the thread's own (a handler on an alternate signal stack, a
/// coroutine from makecontext) must neither kill the program nor close the calls open on the
/// thread's stack: the program runs as untraced, and no call is marked unwound.
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
                               label: String, file: StaticString = #filePath, line: UInt = #line) throws -> RecordedTrace? {
        let untraced = try Command.run(plain.binary.path, arguments, timeout: 60)
        XCTAssertEqual(untraced.status, 0, "\(label) untraced: \(untraced)", file: file, line: line)
        let (result, url) = try traced.run(arguments, environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_THREADS": threads],
                                           traceName: arguments.joined(separator: "-"), timeout: 60)
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
