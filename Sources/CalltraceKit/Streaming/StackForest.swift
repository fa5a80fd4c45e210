/// The folded stacks of one thread's calls as they come in exit order, without the tree: each
/// distinct stack (the functions from a root call down to a call) with its calls' summed self time
/// and the earliest start among them. The streaming counterpart of walking `ProfileThread`'s tree
/// (`FoldedExport`), following `CallTreeBuilder`'s rule as `SelfTimeStack` does: a call adopts
/// the pending calls that started after it, deeper than it; those are its children.
///
/// A call's stack is not known when it ends (its callers end after it), so what is pending is
/// kept aggregated: per run of pending calls at one depth (`PendingRuns`) a forest of
/// nodes, siblings merged by function. A call that ends takes over the forests of the runs it
/// adopts as its children (merged, when it adopts several), then is merged by function into the
/// run at its own depth. Memory is then one node per distinct path in the open subtrees (a loop
/// in `main` making ten million calls of `f > g` keeps two nodes), not one per call; freed nodes
/// are used again. Merging walks only the paths both sides have: a subtree the other side lacks
/// moves whole.
///
/// What runs cannot say clears `isExact`: the caller then builds the tree.
struct StackForest {
    /// Per run, a node (function -1) whose children are the run's calls, merged by function.
    private var pending = PendingRuns<Int32>()
    /// False once a call's children could not be told from runs.
    var isExact: Bool { pending.isExact }
    /// Calls placed.
    private(set) var calls = 0

    /// The nodes' functions (-1 for a run's holder) and the child of each function under each
    /// node: a holder's or a call's children are linked there.
    private var trie = CallPathTrie()
    // Per node: the summed self time in nanoseconds, the earliest start, and the links of each
    // node's children (in no order).
    private var selfTime: [Int64] = []
    private var firstStart: [Int64] = []
    private var firstChild: [Int32] = []
    /// The next sibling; for a free node, the next free one.
    private var nextSibling: [Int32] = []
    private var freeNodes: Int32 = -1
    /// Node pairs still to merge (children of the first into the second), reused.
    private var merges: [(from: Int32, into: Int32)] = []

    /// Nodes in use or free: what the forest holds at its peak.
    var nodeCount: Int { trie.count }

    /// A call of `function` that ended now, after every call that ended before it on its thread.
    mutating func place(function called: Int32, start: Int64, depth: UInt32, cost: Int64) {
        calls += 1
        let low = pending.adopting(start: start, depth: depth)
        let time = cost &- pending.cost(from: low)
        // Its children: the adopted runs' forests, in the first one's holder.
        var children: Int32 = -1
        if low < pending.runs.count {
            children = pending.runs[low].payload
            for run in pending.runs[(low + 1)...] { merge(run.payload, into: children) }
        }
        var parent: Int32 = -1
        if pending.place(from: low, start: start, depth: depth, cost: cost, newRun: -1) {
            parent = pending.runs[pending.runs.count - 1].payload
        } else {
            parent = node(function: -1, selfTime: 0, start: start)
            pending.updateLast { $0 = parent }
        }
        attach(called, selfTime: max(time, 0), start: start, children: children, under: parent)
    }

    /// Every distinct stack once the thread's calls are all placed: the pending runs are its
    /// roots. `body` gets the functions from the root down, the summed self time (nanoseconds)
    /// and the earliest start. Ends the forest.
    mutating func finish(_ body: (_ frames: [Int32], _ selfTime: Int64, _ firstStart: Int64) -> Void) {
        let runs = pending.removeAll()
        guard let first = runs.first else { return }
        for run in runs.dropFirst() { merge(run.payload, into: first.payload) }
        // Depth first with an explicit stack: a deep recursion must not overflow the thread's.
        var frames: [Int32] = []
        var stack: [(node: Int32, depth: Int)] = []
        var child = firstChild[Int(first.payload)]
        while child >= 0 {
            stack.append((child, 0))
            child = nextSibling[Int(child)]
        }
        while let (node, depth) = stack.popLast() {
            frames.removeLast(frames.count - depth)
            frames.append(trie.function[Int(node)])
            body(frames, selfTime[Int(node)], firstStart[Int(node)])
            var child = firstChild[Int(node)]
            while child >= 0 {
                stack.append((child, depth + 1))
                child = nextSibling[Int(child)]
            }
        }
    }

    /// The call, with `children`'s children (a holder, or -1) as its own, merged into `parent`'s
    /// child of its function (or made that child).
    private mutating func attach(_ called: Int32, selfTime time: Int64, start: Int64, children: Int32,
                                 under parent: Int32) {
        if let known = trie.find(under: parent, called) {
            selfTime[Int(known)] &+= time
            firstStart[Int(known)] = min(firstStart[Int(known)], start)
            if children >= 0 { merge(children, into: known) }
            return
        }
        let new: Int32
        if children >= 0 {
            // The holder becomes the call's node: its children are linked under it already.
            new = children
            trie.rename(new, to: called)
            selfTime[Int(new)] = time
            firstStart[Int(new)] = start
        } else {
            new = node(function: called, selfTime: time, start: start)
        }
        nextSibling[Int(new)] = firstChild[Int(parent)]
        firstChild[Int(parent)] = new
        trie.link(new, under: parent)
    }

    /// Moves the children of `from` under `into`, merging those of one function, and frees `from`.
    private mutating func merge(_ from: Int32, into: Int32) {
        merges.append((from, into))
        while let (source, target) = merges.popLast() {
            var child = firstChild[Int(source)]
            while child >= 0 {
                let next = nextSibling[Int(child)]
                trie.unlink(child)
                if let known = trie.find(under: target, trie.function[Int(child)]) {
                    selfTime[Int(known)] &+= selfTime[Int(child)]
                    firstStart[Int(known)] = min(firstStart[Int(known)], firstStart[Int(child)])
                    merges.append((child, known))
                } else {
                    nextSibling[Int(child)] = firstChild[Int(target)]
                    firstChild[Int(target)] = child
                    trie.link(child, under: target)
                }
                child = next
            }
            release(source)
        }
    }

    private mutating func node(function called: Int32, selfTime time: Int64, start: Int64) -> Int32 {
        if freeNodes >= 0 {
            let reused = freeNodes
            freeNodes = nextSibling[Int(reused)]
            trie.rename(reused, to: called)
            selfTime[Int(reused)] = time
            firstStart[Int(reused)] = start
            firstChild[Int(reused)] = -1
            nextSibling[Int(reused)] = -1
            return reused
        }
        let new = trie.add(function: called)
        selfTime.append(time)
        firstStart.append(start)
        firstChild.append(-1)
        nextSibling.append(-1)
        return new
    }

    private mutating func release(_ node: Int32) {
        firstChild[Int(node)] = -1
        nextSibling[Int(node)] = freeNodes
        freeNodes = node
    }
}
