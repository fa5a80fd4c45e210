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
///
/// Linear whatever the file says: the records a scan adopts leave the stack, and a scan passes at
/// most `interleavedLimit` of the ones it skips. Without that bound a crafted trace (thousands of
/// records at one depth that all start after the ones that end later) made every scan walk the
/// whole stack: quadratic time.
enum CallTreeBuilder {
    /// How many records that stay pending one scan may pass. A signal handler's records make a
    /// few; a trace that needs more is damaged, and its extra records become roots.
    static let interleavedLimit = 64

    /// The tree links of calls in exit order: roots by start time, and per call its first child,
    /// next sibling and parent (-1 for none).
    static func links<Order: CallTreeOrder>(_ order: Order) -> TreeLinks {
        var work = 0
        return links(order, work: &work)
    }

    static func links<Order: CallTreeOrder>(_ order: Order, work: inout Int) -> TreeLinks {
        let count = min(order.count, Int(Int32.max))
        var firstChild = [Int32](repeating: -1, count: count)
        var nextSibling = [Int32](repeating: -1, count: count)
        var parent = [Int32](repeating: -1, count: count)
        var pending: [Int32] = []
        firstChild.withUnsafeMutableBufferPointer { firstChild in
            nextSibling.withUnsafeMutableBufferPointer { nextSibling in
                parent.withUnsafeMutableBufferPointer { parent in
                    var links = Links(order: order, firstChild: firstChild, nextSibling: nextSibling, parent: parent)
                    for index in 0..<count { links.place(Int32(index), pending: &pending) }
                    work += links.work
                }
            }
        }
        sortByStart(&pending, order: order)
        return TreeLinks(roots: pending, firstChild: firstChild, nextSibling: nextSibling, parent: parent)
    }

    struct TreeLinks {
        var roots: [Int32]
        var firstChild: [Int32]
        var nextSibling: [Int32]
        var parent: [Int32]
    }

    /// The one pass, over unsafe buffers: ten million records make bounds and uniqueness checks
    /// per access a large part of the time.
    private struct Links<Order: CallTreeOrder> {
        let order: Order
        let firstChild: UnsafeMutableBufferPointer<Int32>
        let nextSibling: UnsafeMutableBufferPointer<Int32>
        let parent: UnsafeMutableBufferPointer<Int32>
        var adopted: [Int32] = []
        var skipped: [Int32] = []
        var work = 0

        init(order: Order, firstChild: UnsafeMutableBufferPointer<Int32>,
             nextSibling: UnsafeMutableBufferPointer<Int32>, parent: UnsafeMutableBufferPointer<Int32>) {
            self.order = order
            self.firstChild = firstChild
            self.nextSibling = nextSibling
            self.parent = parent
        }

        /// `node` adopts what is pending for it, then waits for its own parent.
        mutating func place(_ node: Int32, pending: inout [Int32]) {
            let start = order.start(Int(node))
            let depth = order.depth(Int(node))
            // How far down the pending stack the calls made during this one go.
            var low = pending.count
            var interleaved = 0
            while low > 0 {
                let candidate = Int(pending[low - 1])
                guard order.start(candidate) >= start else { break }
                if order.depth(candidate) <= depth {
                    guard interleaved < CallTreeBuilder.interleavedLimit else { break }
                    interleaved += 1
                }
                low -= 1
            }
            work += pending.count - low + 1
            if low < pending.count {
                if interleaved > 0 || !startsInOrder(pending[low...]) {
                    adoptTheSlowWay(node, depth: depth, from: low, pending: &pending)
                } else {
                    // The usual case: pending[low...] are exactly the children, already in start
                    // order (siblings on one thread end in the order they start).
                    var next: Int32 = -1
                    for child in pending[low...].reversed() {
                        nextSibling[Int(child)] = next
                        parent[Int(child)] = node
                        next = child
                    }
                    firstChild[Int(node)] = next
                    pending.removeLast(pending.count - low)
                }
            }
            pending.append(node)
        }

        private func startsInOrder(_ nodes: ArraySlice<Int32>) -> Bool {
            var previous = Int64.min
            for node in nodes {
                let start = order.start(Int(node))
                if start < previous { return false }
                previous = start
            }
            return true
        }

        /// Records of a signal handler interleaved with the children (kept pending for a
        /// shallower parent), or children that did not end in start order.
        private mutating func adoptTheSlowWay(_ node: Int32, depth: UInt32, from low: Int, pending: inout [Int32]) {
            adopted.removeAll(keepingCapacity: true)
            skipped.removeAll(keepingCapacity: true)
            for candidate in pending[low...] {
                if order.depth(Int(candidate)) > depth { adopted.append(candidate) } else { skipped.append(candidate) }
            }
            pending.removeLast(pending.count - low)
            pending.append(contentsOf: skipped)
            let order = self.order
            if !startsInOrder(adopted[...]) {
                // Stable, so calls that started on the same tick keep their exit order.
                adopted = adopted.enumerated()
                    .sorted { (order.start(Int($0.element)), $0.offset) < (order.start(Int($1.element)), $1.offset) }
                    .map(\.element)
            }
            var next: Int32 = -1
            for child in adopted.reversed() {
                nextSibling[Int(child)] = next
                parent[Int(child)] = node
                next = child
            }
            firstChild[Int(node)] = next
        }
    }

    private static func sortByStart<Order: CallTreeOrder>(_ nodes: inout [Int32], order: Order) {
        func start(_ node: Int32) -> Int64 { order.start(Int(node)) }
        let sorted = zip(nodes, nodes.dropFirst()).allSatisfy { start($0) <= start($1) }
        if !sorted {
            // Stable, so calls that started on the same tick keep their exit order.
            nodes = nodes.enumerated()
                .sorted { (start($0.element), $0.offset) < (start($1.element), $1.offset) }
                .map(\.element)
        }
    }
}

/// What `CallTreeBuilder` reads of calls in exit order: each one's start (any clock, in order) and
/// depth on its thread's stack.
protocol CallTreeOrder {
    var count: Int { get }
    func start(_ index: Int) -> Int64
    func depth(_ index: Int) -> UInt32
}
