import CalltraceKit
import Foundation
import XCTest

/// One call from a trace, named and timed, in the order the tree prints it.
struct RecordedCall: CustomStringConvertible {
    var depth: Int
    var name: String
    var cost: Nanoseconds
    var unfinished: Bool
    var unwound: Bool
    var stream: UInt32

    var description: String {
        let flags = (unfinished ? " (unfinished)" : "") + (unwound ? " (unwound)" : "")
        return String(format: "%2d|%7.2f ms|", depth, cost.milliseconds)
            + String(repeating: "  ", count: depth) + name + flags
    }
}

/// A trace read back through CalltraceKit, as the report would show it.
struct RecordedTrace {
    let trace: Trace
    let calls: [RecordedCall]

    init(_ url: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        guard FileManager.default.fileExists(atPath: url.path) else {
            XCTFail("no trace at \(url.path)", file: file, line: line)
            throw XCTSkip("no trace")
        }
        let trace = try TraceReader.read(path: url.path)
        self.trace = trace
        let symbols = Symbolicator(modules: trace.modules, warn: { _ in })
        var named: [RecordedCall] = []
        for tree in CallTreeBuilder.buildAll(trace: trace) {
            tree.forEachNode { node, _ in
                let r = tree.record(node)
                named.append(RecordedCall(depth: Int(r.depth),
                                          name: symbols.symbolicate(r.function, atTick: r.endTick).name,
                                          cost: trace.clock.duration(ticks: r.durationTicks),
                                          unfinished: r.isUnfinished, unwound: r.isUnwound, stream: r.stream))
            }
        }
        self.calls = named
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
