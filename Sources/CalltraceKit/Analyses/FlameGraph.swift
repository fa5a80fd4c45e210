/// One thread's calls merged by stack, for the flame graph: a trie whose node is a stack (the
/// thread at node 0, then one function per level), holding the inclusive time and the number of
/// the calls that had that stack. Built in one pre-order walk over the profile's call links with
/// one step of a `CallPathTrie` a call, never a string per call.
struct FlameGraph {
    /// The stacks: per node the function (-1 for the thread's node 0) and the parent node (-1 for
    /// node 0).
    private var trie = CallPathTrie()
    /// Per node: the depth (0 for node 0), the summed totals and the number of calls merged.
    private(set) var depth: [Int32] = [0]
    private(set) var total: [Int64] = [0]
    private(set) var calls: [Int] = [0]
    /// Children of node n: `children[childStart[n]..<childStart[n + 1]]`, ordered by `rank`.
    private(set) var childStart: [Int32] = []
    private(set) var children: [Int32] = []

    var count: Int { trie.count }
    var function: [Int32] { trie.function }

    /// Merges `thread`'s calls; siblings are ordered by `rank` of their function (the position of
    /// its name among all names: the order of a flame graph, which does not show time order).
    init(_ thread: ProfileThread, rank: [Int32]) {
        let root = trie.add(function: -1)
        var path: [Int32] = []
        thread.forEachPreOrder { call, treeDepth in
            if path.count > treeDepth { path.removeLast(path.count - treeDepth) }
            let up = path.last ?? root
            let here = Int(trie.child(of: up, thread.function[call]))
            if here == total.count {
                depth.append(depth[Int(up)] &+ 1)
                total.append(0)
                calls.append(0)
            }
            // Sums stop at Int64.max (crafted times): no total is ever negative.
            let cost = max(thread.cost(call).value, 0)
            total[here] = Self.sum(total[here], cost)
            calls[here] += 1
            if treeDepth == 0 {
                total[0] = Self.sum(total[0], cost)
                calls[0] += 1
            }
            path.append(Int32(here))
        }
        let parent = trie.parent
        // Children grouped by parent (counting sort), then each group by rank.
        var start = [Int32](repeating: 0, count: count + 1)
        for node in 1..<count { start[Int(parent[node]) + 1] += 1 }
        for node in 0..<count { start[node + 1] += start[node] }
        var next = start
        var children = [Int32](repeating: 0, count: max(count - 1, 0))
        for node in 1..<count {
            let up = Int(parent[node])
            children[Int(next[up])] = Int32(truncatingIfNeeded: node)
            next[up] += 1
        }
        let function = trie.function
        for node in 0..<count where start[node + 1] - start[node] > 1 {
            children[Int(start[node])..<Int(start[node + 1])].sort { a, b in
                let (fa, fb) = (Int(function[Int(a)]), Int(function[Int(b)]))
                return (rank[fa], fa) < (rank[fb], fb)
            }
        }
        childStart = start
        self.children = children
    }

    private static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (result, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : result
    }

    /// The children of `node`, in order.
    func children(of node: Int) -> ArraySlice<Int32> { children[Int(childStart[node])..<Int(childStart[node + 1])] }

    /// Inclusive time less the children's (never below zero).
    func selfTime(_ node: Int) -> Int64 {
        var time = total[node]
        for child in children(of: node) { time &-= total[Int(child)] }
        return max(time, 0)
    }

    /// The position of each function's name in name order (ties by index), for `init`.
    static func ranks(of functions: [ProfileFunction]) -> [Int32] {
        let order = functions.indices.sorted { (functions[$0].name, $0) < (functions[$1].name, $1) }
        var rank = [Int32](repeating: 0, count: functions.count)
        for (position, index) in order.enumerated() { rank[index] = Int32(truncatingIfNeeded: position) }
        return rank
    }

    /// A drawn frame: a node and its span in the graph, in nanoseconds from the graph's left edge.
    struct Frame {
        var node: Int
        var start: Double
        var end: Double
    }

    /// The frames of `minimumTime` or more whose parents are drawn, parents before children, each
    /// child inside its parent: children lie side by side from the parent's left edge, each as wide
    /// as its time, cut at the parent's right edge (a child's overhead estimate can leave its
    /// parent a little less time than it). Also: how many nodes were left out.
    func layout(minimumTime: Double) -> (frames: [Frame], omitted: Int) {
        let whole = Double(total[0])
        var frames = [Frame(node: 0, start: 0, end: whole)]
        var index = 0
        while index < frames.count {
            let frame = frames[index]
            var cursor = frame.start
            for child in children(of: frame.node) {
                let time = Double(total[Int(child)])
                let end = min(cursor + time, frame.end)
                // A frame left out keeps its place: the others stay where their times put them.
                if time > 0, time >= minimumTime { frames.append(Frame(node: Int(child), start: cursor, end: end)) }
                cursor = end
            }
            index += 1
        }
        return (frames, count - frames.count)
    }
}
