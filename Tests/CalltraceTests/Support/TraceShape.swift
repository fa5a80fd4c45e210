@testable import CalltraceKit
import Foundation
import XCTest

/// A trace's call trees with each call's parent in the tree, for checks of the tree's shape over
/// many calls (hundreds of thousands): each function is named once, not once per call.
struct TraceShape {
    struct Call: CustomStringConvertible {
        var depth: Int          // on the thread's stack, as recorded
        var treeDepth: Int      // in the tree the report prints (roots are 0)
        var parent: Int?        // index into `calls`
        var name: String
        /// The measured time, hooks included: the timeline the control-flow tests check (fixtures
        /// that loop for a wall-clock time do less work traced, so their cost is less than that).
        var cost: Nanoseconds
        /// What `report` shows: the cost with the hooks' overhead taken out (OverheadCompensationTests).
        var reportedCost: Nanoseconds
        /// How far that cost may be off, as `report` states it: half the overhead taken out (`± X`).
        var uncertainty: Nanoseconds
        var unfinished: Bool
        var unwound: Bool
        var stream: UInt32

        var description: String {
            let flags = (unfinished ? " (unfinished)" : "") + (unwound ? " (unwound)" : "")
            // Deep trees (200,000 levels) would print megabytes of indentation: cap it.
            let indent = treeDepth <= 20 ? String(repeating: "  ", count: treeDepth) : "  ... [\(treeDepth)] "
            return String(format: "%2d|%7.3f ms|", depth, cost.milliseconds) + indent + name + flags
        }
    }

    let trace: DecodedTrace
    /// Every call of every thread, in the order the report prints them (pre-order).
    let calls: [Call]
    /// The main thread's calls in the order they ended (the order of the records in the file).
    let exitOrder: [(name: String, depth: Int)]

    /// `measured`: keep every recorded call, also those whose cost (overhead out) is under the
    /// threshold, which `report` leaves out (`report --raw`).
    init(_ url: URL, measured: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws {
        guard FileManager.default.fileExists(atPath: url.path) else {
            XCTFail("no trace at \(url.path)", file: file, line: line)
            throw TestFailure("no trace")
        }
        let trace = try DecodedTrace.read(path: url.path, options: .init(measured: measured))
        self.trace = trace
        let symbols = Symbolicator(modules: trace.modules, warn: { _ in })
        var names: [UInt64: String] = [:]
        func name(_ r: CallRecord) -> String {
            // An address names one function, unless modules came and went at the same place.
            guard symbols.addressesAreUnambiguous else { return symbols.symbolicate(r.function, atTick: r.endTick).name }
            if let known = names[r.function] { return known }
            let found = symbols.symbolicate(r.function, atTick: r.endTick).name
            names[r.function] = found
            return found
        }
        var calls: [Call] = []
        calls.reserveCapacity(trace.records.count)
        for thread in trace.threads {
            var lastAtLevel: [Int] = []
            let records = trace.records(ofStream: thread.stream)
            Self.forEachPreOrder(records) { node, level in
                let r = records[records.startIndex + node]
                let parent: Int? = level > 0 ? lastAtLevel[level - 1] : nil
                if lastAtLevel.count > level { lastAtLevel.removeSubrange(level...) }
                lastAtLevel.append(calls.count)
                calls.append(Call(depth: Int(r.depth), treeDepth: level, parent: parent, name: name(r),
                                  cost: trace.clock.duration(ticks: r.durationTicks),
                                  reportedCost: trace.clock.duration(ticks: r.costTicks),
                                  uncertainty: trace.clock.duration(ticks: Ticks(r.overheadTicks.count / 2)),
                                  unfinished: r.isUnfinished, unwound: r.isUnwound, stream: r.stream))
            }
        }
        self.calls = calls
        if let main = trace.threads.first {
            exitOrder = trace.records(ofStream: main.stream).map { (name($0), Int($0.depth)) }
        } else {
            exitOrder = []
        }
    }

    func calls(named name: String) -> [Call] { calls.filter { $0.name == name } }

    /// Visits a thread's records (in exit order) in pre-order with their depth in the tree, the
    /// tree linked by the reader's `CallTreeBuilder`.
    private static func forEachPreOrder(_ records: ArraySlice<CallRecord>, _ body: (_ node: Int, _ level: Int) -> Void) {
        let links = Array(records).withUnsafeBufferPointer { CallTreeBuilder.links(RecordOrder(records: $0)) }
        for (node, depth) in preOrder(links) { body(node, depth) }
    }

    func parent(of call: Int) -> Call? { calls[call].parent.map { calls[$0] } }

    /// Calls whose recorded depth is not their parent's + 1 (or, for a root, not 0). With every
    /// call recorded (threshold 0, nothing dropped) a consistent trace has none.
    var nestingErrors: [Int] {
        calls.indices.filter { i in
            guard let parent = calls[i].parent else { return calls[i].depth != 0 }
            return calls[i].depth != calls[parent].depth + 1
        }
    }

    /// Calls nested deeper than their recorded parent's depth allows, or not under it at all
    /// (depth not above the parent's): wrong whatever the threshold.
    var orderErrors: [Int] {
        calls.indices.filter { i in
            guard let parent = calls[i].parent else { return false }
            return calls[i].depth <= calls[parent].depth
        }
    }

    /// The call with its ancestors, outermost first, for failure messages.
    func path(to call: Int) -> String {
        var chain: [Call] = []
        var next: Int? = call
        while let i = next {
            chain.append(calls[i])
            next = calls[i].parent
        }
        return chain.reversed().map(\.description).joined(separator: "\n")
    }

    /// Up to `limit` offending calls with their ancestors.
    func explain(_ offenders: [Int], limit: Int = 5) -> String {
        offenders.prefix(limit).map { path(to: $0) }.joined(separator: "\n--\n")
    }

    /// The first `limit` lines of the tree, for failure messages.
    func head(_ limit: Int = 40) -> String {
        calls.prefix(limit).map(\.description).joined(separator: "\n")
    }

    /// (depth, name) of each call, counted: "2 dive" -> 20000.
    var census: [String: Int] {
        var counts: [String: Int] = [:]
        for call in calls { counts["\(call.depth) \(call.name)\(call.unwound ? " (unwound)" : "")", default: 0] += 1 }
        return counts
    }

    var censusText: String {
        census.sorted { $0.key.localizedStandardCompare($1.key) == .orderedAscending }
            .map { "\($0.value)\t\($0.key)" }.joined(separator: "\n")
    }
}

/// The calls `links` tie together, in pre-order (a parent, then its children by start time), with
/// their depth in the tree (roots are 0).
func preOrder(_ links: CallTreeBuilder.TreeLinks) -> [(node: Int, depth: Int)] {
    var result: [(node: Int, depth: Int)] = []
    var stack = links.roots.reversed().map { (node: Int($0), depth: 0) }
    while let (node, depth) = stack.popLast() {
        result.append((node, depth))
        var children: [Int] = []
        var child = links.firstChild[node]
        while child >= 0 {
            children.append(Int(child))
            child = links.nextSibling[Int(child)]
        }
        stack += children.reversed().map { ($0, depth + 1) }
    }
    return result
}

/// Records as `CallTreeBuilder` reads them: ticks mapped to Int64 keeping their order.
struct RecordOrder: CallTreeOrder {
    let records: UnsafeBufferPointer<CallRecord>
    var count: Int { records.count }
    func start(_ index: Int) -> Int64 { Int64(bitPattern: records[index].startTick.count ^ (1 << 63)) }
    func depth(_ index: Int) -> UInt32 { records[index].depth }
}
