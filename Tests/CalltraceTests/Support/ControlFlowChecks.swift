import Foundation
import XCTest

/// Checks shared by the control-flow tests: nesting is consistent and the trailing `final_step`
/// (15 ms, from main) sits at depth 1 under main, so depth did not drift.

/// Every call sits exactly one level under its parent, and main is the only root.
func assertConsistentNesting(_ shape: TraceShape, context: String,
                             file: StaticString = #filePath, line: UInt = #line) {
    let errors = shape.nestingErrors
    XCTAssertTrue(errors.isEmpty, "\(errors.count) calls not one level under their parent:\n"
                  + "\(shape.explain(errors))\n\(context)", file: file, line: line)
    let roots = shape.calls.filter { $0.parent == nil }.map(\.name)
    XCTAssertEqual(roots, ["main"], context, file: file, line: line)
}

/// Depth did not drift: the last call, final_step (15 ms), is at depth 1 under main, and main is
/// the root at depth 0 with its whole cost.
func assertFinalStep(_ trace: RecordedTrace, mainAtLeastMs: Double, context: String,
                     file: StaticString = #filePath, line: UInt = #line) {
    let finalName = trace.calls.contains { $0.name == "final_step()" } ? "final_step()" : "final_step"
    XCTAssertEqual(trace.calls.last?.name, finalName, context, file: file, line: line)
    XCTAssertEqual(trace.calls.last?.depth, 1, context, file: file, line: line)
    XCTAssertEqual(trace.outline.last, "  " + finalName, context, file: file, line: line)
    assertCost(trace.calls.last, atLeastMs: 15, below: 500, in: trace, file: file, line: line)
    XCTAssertEqual(trace.calls.first?.name, "main", context, file: file, line: line)
    XCTAssertEqual(trace.calls.first?.depth, 0, context, file: file, line: line)
    assertCost(trace.calls.first, atLeastMs: mainAtLeastMs, below: mainAtLeastMs + 1500, in: trace, file: file, line: line)
    XCTAssertFalse(trace.calls.first?.unwound ?? true, context, file: file, line: line)
    XCTAssertFalse(trace.calls.first?.unfinished ?? true, context, file: file, line: line)
}

func assertFinalStep(_ shape: TraceShape, mainAtLeastMs: Double, context: String,
                     file: StaticString = #filePath, line: UInt = #line) {
    guard let last = shape.calls.indices.last, let main = shape.calls.first else {
        XCTFail("empty trace; \(context)", file: file, line: line)
        return
    }
    let final = shape.calls[last]
    XCTAssertTrue(final.name.hasPrefix("final_step"), "last call \(final); \(context)", file: file, line: line)
    XCTAssertEqual(final.depth, 1, "\(shape.path(to: last))\n\(context)", file: file, line: line)
    XCTAssertEqual(shape.calls[last].parent, 0, "\(shape.path(to: last))\n\(context)", file: file, line: line)
    XCTAssertGreaterThanOrEqual(final.cost.milliseconds, 15, "\(final)", file: file, line: line)
    XCTAssertLessThan(final.cost.milliseconds, 500, "\(final)", file: file, line: line)
    XCTAssertEqual(main.name, "main", context, file: file, line: line)
    XCTAssertEqual(main.depth, 0, context, file: file, line: line)
    XCTAssertFalse(main.unwound || main.unfinished, "\(main)", file: file, line: line)
    XCTAssertGreaterThanOrEqual(main.cost.milliseconds, mainAtLeastMs, "\(main)", file: file, line: line)
    XCTAssertLessThan(main.cost.milliseconds, mainAtLeastMs + 3000, "\(main)", file: file, line: line)
}
