/// Builds the call tree of one thread in one pass over its records in exit order.
///
/// Records arrive children before parents, so a stack of pending nodes is enough: a record at
/// depth d adopts the pending records deeper than d that started after it (its calls, and their
/// calls whose own parent was too short to be recorded or was dropped), then waits on the stack
/// for its own parent. Unfinished calls are written last, innermost first, and fit the same
/// rule: each adopts what is still pending below it. Whatever is left pending at the end becomes
/// a root, so no record is ever lost.
///
/// One exception to strict exit order: a signal handler that runs while a call's exit hook is
/// between popping and writing the call is recorded first, at the same depth. So the scan down the
/// pending stack skips records at depth d or less that started after this one (they stay pending,
/// for a shallower parent) and stops only at the first record that started before this one.
public enum CallTreeBuilder {
    public static func build(trace: Trace, stream: UInt32) -> CallTree {
        build(records: trace.records(ofStream: stream), stream: stream)
    }

    /// One tree per thread, in `trace.threads` order (the main thread first).
    public static func buildAll(trace: Trace) -> [CallTree] {
        trace.threads.map { build(trace: trace, stream: $0.stream) }
    }

    public static func build(records: ArraySlice<CallRecord>, stream: UInt32) -> CallTree {
        // Int32 links keep the tree small; a single thread with more than 2^31 recorded calls
        // (a trace of tens of gigabytes) is cut there.
        let count = min(records.count, Int(Int32.max))
        let base = records.startIndex
        var firstChild = [Int32](repeating: -1, count: count)
        var nextSibling = [Int32](repeating: -1, count: count)
        var pending: [Int32] = []
        var adopted: [Int32] = []
        var skipped: [Int32] = []

        for index in 0..<count {
            let record = records[base + index]
            adopted.removeAll(keepingCapacity: true)
            skipped.removeAll(keepingCapacity: true)
            while let top = pending.last {
                let candidate = records[base + Int(top)]
                guard candidate.startTick >= record.startTick else { break }
                if candidate.depth > record.depth { adopted.append(top) } else { skipped.append(top) }
                pending.removeLast()
            }
            pending.append(contentsOf: skipped.reversed())
            // Popped latest-exit first; siblings on one thread almost always end in start order.
            adopted.reverse()
            sortByStart(&adopted, records: records)
            var next: Int32 = -1
            for child in adopted.reversed() {
                nextSibling[Int(child)] = next
                next = child
            }
            firstChild[index] = next
            pending.append(Int32(index))
        }
        sortByStart(&pending, records: records)
        return CallTree(stream: stream, records: records.prefix(count), roots: pending.map(Int.init),
                        firstChild: firstChild, nextSibling: nextSibling)
    }

    private static func sortByStart(_ nodes: inout [Int32], records: ArraySlice<CallRecord>) {
        let base = records.startIndex
        func start(_ node: Int32) -> UInt64 { records[base + Int(node)].startTick }
        let sorted = zip(nodes, nodes.dropFirst()).allSatisfy { start($0) <= start($1) }
        if !sorted {
            // Stable, so calls that started on the same tick keep their exit order.
            nodes = nodes.enumerated()
                .sorted { (start($0.element), $0.offset) < (start($1.element), $1.offset) }
                .map(\.element)
        }
    }
}
