/// The calls of one thread as a tree. Nodes are indices into `records` (0-based, whatever the
/// slice's own indices are); links are two `Int32` arrays, 8 bytes a call, so a tree over ten
/// million calls costs 80 MB on top of the records rather than ten million objects.
public struct CallTree: Sendable {
    public typealias Node = Int

    public let stream: UInt32
    public let records: ArraySlice<CallRecord>
    /// Top-level calls, by start time.
    public let roots: [Node]
    let firstChild: [Int32]
    let nextSibling: [Int32]

    init(stream: UInt32, records: ArraySlice<CallRecord>, roots: [Node], firstChild: [Int32],
         nextSibling: [Int32]) {
        self.stream = stream
        self.records = records
        self.roots = roots
        self.firstChild = firstChild
        self.nextSibling = nextSibling
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
}
