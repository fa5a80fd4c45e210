import CalltraceKit
import Foundation
import XCTest

/// One call from a trace, named and timed, in the order the tree prints it.
typealias RecordedCall = TraceShape.Call

/// A trace read back through CalltraceKit, as the report would show it.
struct RecordedTrace {
    let trace: DecodedTrace
    let calls: [RecordedCall]

    init(_ url: URL, measured: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws {
        let shape = try TraceShape(url, measured: measured, file: file, line: line)
        trace = shape.trace
        calls = shape.calls
    }

    /// The whole tree, for failure messages.
    var tree: String { calls.map(\.description).joined(separator: "\n") }

    func calls(named name: String) -> [RecordedCall] { calls.filter { $0.name == name } }

    /// The (depth, name) outline, the shape assertions compare.
    var outline: [String] { calls.map { String(repeating: "  ", count: $0.depth) + $0.name } }
}

/// Asserts a cost: never below `atLeast` (sleep-based fixtures cannot finish early) and below a
/// loose upper bound (the machine may be busy).
func assertCost(_ call: RecordedCall?, atLeastMs low: Double, below high: Double, in trace: RecordedTrace,
                file: StaticString = #filePath, line: UInt = #line) {
    guard let call else {
        XCTFail("call missing from the tree:\n\(trace.tree)", file: file, line: line)
        return
    }
    XCTAssertGreaterThanOrEqual(call.cost.milliseconds, low, "\(call.name) too cheap:\n\(trace.tree)", file: file, line: line)
    XCTAssertLessThan(call.cost.milliseconds, high, "\(call.name) too costly:\n\(trace.tree)", file: file, line: line)
}
