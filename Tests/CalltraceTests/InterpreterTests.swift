import CalltraceKit
import Foundation
import XCTest

/// An interpreter built by its own Makefile, whose errors longjmp through its parser.
final class InterpreterTests: XCTestCase {
    func testInterpreterErrorsUnwindThroughTheParser() throws {
        let make = try which("make")
        let workload = Workspace.fixtures.appendingPathComponent("interp/workload.calc").path
        for compiler in Compiler.allCases {
            let plain = try buildCalc(make: make, compiler: compiler, instrumented: false)
            let traced = try buildCalc(make: make, compiler: compiler, instrumented: true)
            let expected = try Command.run(plain.path, [workload])
            XCTAssertEqual(expected.status, 1, "\(compiler): the workload has failing lines: \(expected)")
            XCTAssertTrue(expected.stdout.contains("27: repeat 3000: 3000 errors, last: division by zero\n"), expected.stdout)

            let trace = traced.deletingLastPathComponent().appendingPathComponent("calc.trace")
            let result = try Command.run(traced.path, [workload],
                                         environment: ["CALLTRACE_OUTPUT": trace.path, "CALLTRACE_THRESHOLD": "0"])
            XCTAssertEqual(result.status, expected.status, "\(compiler): \(result)")
            XCTAssertEqual(result.stdout, expected.stdout, "\(compiler): traced output differs")
            XCTAssertEqual(result.stderr, "", "\(compiler)")

            let shape = try TraceShape(trace)
            let context = "\(compiler):\n\(shape.censusText.split(separator: "\n").prefix(60).joined(separator: "\n"))"
            XCTAssertEqual(shape.trace.header.drops, 0, context)
            XCTAssertTrue(shape.trace.header.closedCleanly, context)
            assertConsistentNesting(shape, context: context)
            // The deepest path: main, run_script, run_line, run_repeat, protected_run, parse_statement
            // (depth 5); 39 parenthesis levels of 4 parser frames (parse_expr, parse_term, parse_unary,
            // parse_primary); parse_call, call_builtin, 21 frames of fib(-1) ... fib(-21), calc_error.
            // gcc instruments the static functions it inlines; clang (after inlining) does not.
            let maxDepth = shape.calls.map(\.depth).max() ?? 0
            XCTAssertLessThanOrEqual(maxDepth, 5 + 4 * 40 + 2 + 21 + 1, context)
            XCTAssertGreaterThanOrEqual(maxDepth, 80, "the deep lines were recorded; \(context)")
            // 15 failing lines and 6,600 failing repeats: each error left calc_error by a longjmp.
            let errors = shape.calls(named: "calc_error")
            XCTAssertEqual(errors.count, 6615, context)
            XCTAssertTrue(errors.allSatisfy(\.unwound), context)
            XCTAssertTrue(shape.calls(named: "protected_run").allSatisfy { !$0.unwound && (3...4).contains($0.depth) },
                          context)
            XCTAssertEqual(shape.calls(named: "run_line").count, 35, context)
            XCTAssertTrue(shape.calls(named: "run_line").allSatisfy { $0.depth == 2 && !$0.unwound }, context)
            XCTAssertEqual(shape.calls.filter { $0.parent == nil }.map(\.name), ["main"], context)
            let last = shape.exitOrder.suffix(3)
            XCTAssertEqual(last.map(\.name), ["run_line", "run_script", "main"], "\(last)")
            XCTAssertTrue(last.allSatisfy { $0.depth <= 2 }, "\(last)")
        }
    }

    /// Builds Fixtures/interp with its Makefile into a temporary directory: through
    /// Scripts/calltrace-cc, or with the plain compiler and no instrumentation.
    private func buildCalc(make: String, compiler: Compiler, instrumented: Bool) throws -> URL {
        try Workspace.requireProducts()
        let out = Workspace.directory("calc-\(compiler.rawValue)-\(instrumented ? "traced" : "plain")")
        let cc = instrumented ? Workspace.compilerWrapper.path : try which(compiler.cc)
        let result = try Command.run(make, ["-C", Workspace.fixtures.appendingPathComponent("interp").path,
                                            "O=\(out.path)", "CC=\(cc)"],
                                     environment: compiler.wrapperEnvironment.merging(
                                        ["CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path]) { a, _ in a })
        guard result.status == 0 else {
            XCTFail("make with \(compiler) failed:\n\(result)")
            throw TestFailure("calc did not build")
        }
        return out.appendingPathComponent("calc")
    }
}
