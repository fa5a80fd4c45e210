/// The calls of one thread as a tree. Nodes are indices into `records` (0-based, whatever the
/// slice's own indices are); links are three `Int32` arrays, 12 bytes a call, so a tree over ten
/// million calls costs 120 MB on top of the records rather than ten million objects.
public struct CallTree: Sendable {
    public typealias Node = Int

    public let stream: UInt32
    public let records: ArraySlice<CallRecord>
    /// Top-level calls, by start time.
    public let roots: [Node]
    let firstChild: [Int32]
    let nextSibling: [Int32]
    let parent: [Int32]

    init(stream: UInt32, records: ArraySlice<CallRecord>, roots: [Node], firstChild: [Int32],
         nextSibling: [Int32], parent: [Int32]) {
        self.stream = stream
        self.records = records
        self.roots = roots
        self.firstChild = firstChild
        self.nextSibling = nextSibling
        self.parent = parent
    }

    public var count: Int { firstChild.count }

    public func record(_ node: Node) -> CallRecord { records[records.startIndex + node] }

    /// The node's children, by start time.
    public func children(of node: Node) -> [Node] {
        var result: [Node] = []
        var child = firstChild[node]
        while child >= 0 {
            result.append(Int(child))
            child = nextSibling[Int(child)]
        }
        return result
    }

    /// Visits every node in pre-order (a parent, then its children by start time), with its
    /// depth in the tree (roots are 0). Iterative, so deep trees cannot overflow the stack.
    public func forEachNode(_ body: (_ node: Node, _ treeDepth: Int) throws -> Void) rethrows {
        var stack: [(node: Int32, depth: Int)] = roots.reversed().map { (Int32($0), 0) }
        while let (node, depth) = stack.popLast() {
            try body(Int(node), depth)
            let mark = stack.count
            var child = firstChild[Int(node)]
            while child >= 0 {
                stack.append((child, depth + 1))
                child = nextSibling[Int(child)]
            }
            stack[mark...].reverse()
        }
    }

    /// `forEachNode` for renderers of big trees: the same pre-order, handing over the records
    /// themselves. It walks the links (down to the first child, on to the next sibling, up to the
    /// parent) with no stack, and loads the next node's record before handing over the current
    /// one: records are stored in exit order, so a pre-order walk reads them all over memory, and
    /// the load then overlaps the caller's work instead of stalling it.
    public func forEachNodeFast(records: UnsafeBufferPointer<CallRecord>,
                                _ body: (_ record: CallRecord, _ treeDepth: Int) -> Void) {
        firstChild.withUnsafeBufferPointer { firstChild in
            nextSibling.withUnsafeBufferPointer { nextSibling in
                parent.withUnsafeBufferPointer { parent in
                    for root in roots {
                        var node = Int32(root)
                        var depth = 0
                        var record = records[root]
                        while true {
                            // The pre-order successor within this root's subtree, and its depth.
                            var next = firstChild[Int(node)]
                            var nextDepth = depth + 1
                            if next < 0 {
                                var up = node
                                nextDepth = depth
                                while up != Int32(root) && nextSibling[Int(up)] < 0 {
                                    up = parent[Int(up)]
                                    nextDepth -= 1
                                }
                                next = up == Int32(root) ? -1 : nextSibling[Int(up)]
                            }
                            let upcoming = next >= 0 ? records[Int(next)] : record
                            body(record, depth)
                            guard next >= 0 else { break }
                            node = next
                            depth = nextDepth
                            record = upcoming
                        }
                    }
                }
            }
        }
    }
}
