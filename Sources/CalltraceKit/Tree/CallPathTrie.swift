/// Calls merged by stack: a trie whose node is a call path (a parent node and a function), the
/// one such trie of the views that merge calls by stack. `FoldedExport`, `PprofExport`,
/// `FlameGraph` and `DiffFlameGraph` walk a profile's calls in pre-order and only ever add nodes
/// (`child(of:_:)`, one a call); `StackForest` merges paths while the trace is read, so it also
/// moves nodes to other parents (`unlink`, `link`) and renames a node while it is unlinked (to
/// use it again). Each user keeps its own values per node in arrays of its own,
/// indexed by node.
///
/// A node's children are found in `ChildTable` by (parent, function), and before that in a cache
/// of the child each node found last: a call's path is most often its previous sibling's (a loop
/// calling `step` over and over), so most calls need no hashing at all.
struct CallPathTrie {
    /// Per node: its function (what the user made it with; -1 for a root or holder node).
    private(set) var function: [Int32] = []
    /// Per node: its parent, -1 while it has none (a root, or a node not yet or no longer linked).
    private(set) var parent: [Int32] = []
    /// (parent << 32 | function) -> the linked child.
    private var children = ChildTable()
    /// Per node: the child found or linked last under it, and that child's function (-1: none).
    private var lastChild: [Int32] = []
    private var lastChildFunction: [Int32] = []

    /// Nodes made (linked or not).
    var count: Int { function.count }

    /// A new node of `called` under no parent: a root, or a node to `link` later.
    mutating func add(function called: Int32) -> Int32 {
        let new = Int32(truncatingIfNeeded: function.count)
        function.append(called)
        parent.append(-1)
        lastChild.append(-1)
        lastChildFunction.append(-1)
        return new
    }

    /// The child of `up` for `called`, added when `up` has none: the pre-order walks' one step.
    @inline(__always) mutating func child(of up: Int32, _ called: Int32) -> Int32 {
        if let known = find(under: up, called) { return known }
        let new = add(function: called)
        link(new, under: up)
        return new
    }

    /// The child of `up` for `called`, if it has one.
    @inline(__always) mutating func find(under up: Int32, _ called: Int32) -> Int32? {
        let slot = Int(up)
        if lastChildFunction[slot] == called { return lastChild[slot] }
        guard let known = children[Self.key(up, called)] else { return nil }
        lastChild[slot] = known
        lastChildFunction[slot] = called
        return known
    }

    /// Makes `node`, which has no parent, the child of `up` for its function; `up` must have no
    /// child of that function.
    mutating func link(_ node: Int32, under up: Int32) {
        let called = function[Int(node)]
        children.insert(Self.key(up, called), node)
        parent[Int(node)] = up
        lastChild[Int(up)] = node
        lastChildFunction[Int(up)] = called
    }

    /// Takes `node` from its parent: it has none again.
    mutating func unlink(_ node: Int32) {
        let up = parent[Int(node)]
        guard up >= 0 else { return }
        children.remove(Self.key(up, function[Int(node)]))
        if lastChild[Int(up)] == node {
            lastChild[Int(up)] = -1
            lastChildFunction[Int(up)] = -1
        }
        parent[Int(node)] = -1
    }

    /// Gives `node`, which has no parent, the function `called`: a holder becoming a call's node,
    /// a freed node used again (its children stay: their keys name the node, not its function).
    mutating func rename(_ node: Int32, to called: Int32) {
        function[Int(node)] = called
    }

    /// The functions of `node`'s path, outermost first: `node` and its ancestors that have a
    /// parent (a root node stands for the thread or the program, and is no frame).
    func path(to node: Int32) -> [Int32] {
        var frames: [Int32] = []
        var at = node
        while at >= 0, parent[Int(at)] >= 0 {
            frames.append(function[Int(at)])
            at = parent[Int(at)]
        }
        return frames.reversed()
    }

    @inline(__always) private static func key(_ up: Int32, _ called: Int32) -> UInt64 {
        UInt64(UInt32(bitPattern: up)) << 32 | UInt64(UInt32(bitPattern: called))
    }
}

/// `CallPathTrie`'s (parent << 32 | function) -> child node: open addressing with linear probing
/// and a multiplicative hash, deletion by shifting the entries after back (no tombstones, so the
/// many removals of `StackForest`'s merges leave no debris). Swift's `Dictionary` hashed each key
/// with SipHash: a quarter of the folded stream's time on the 11.4 M-call bench trace.
struct ChildTable {
    /// No key: (parent -1, function -1), which no child has (a child's parent is never -1).
    private static let empty = UInt64.max
    private var keys = [UInt64](repeating: ChildTable.empty, count: 64)
    private var values = [Int32](repeating: -1, count: 64)
    private var count = 0
    private var shift: UInt64 = 64 - 6

    @inline(__always) private func home(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    subscript(key: UInt64) -> Int32? {
        var slot = home(key)
        let mask = keys.count - 1
        while true {
            let found = keys[slot]
            if found == key { return values[slot] }
            if found == Self.empty { return nil }
            slot = (slot + 1) & mask
        }
    }

    /// Adds a key not in the table.
    mutating func insert(_ key: UInt64, _ value: Int32) {
        if (count + 1) * 2 > keys.count { grow() }
        var slot = home(key)
        let mask = keys.count - 1
        while keys[slot] != Self.empty { slot = (slot + 1) & mask }
        keys[slot] = key
        values[slot] = value
        count += 1
    }

    mutating func remove(_ key: UInt64) {
        let mask = keys.count - 1
        var hole = home(key)
        while keys[hole] != key {
            if keys[hole] == Self.empty { return }
            hole = (hole + 1) & mask
        }
        keys[hole] = Self.empty
        count -= 1
        // Entries after the hole whose home is not between it and them move back into it.
        var next = hole
        while true {
            next = (next + 1) & mask
            let moved = keys[next]
            if moved == Self.empty { return }
            let wanted = home(moved)
            let stays = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if stays { continue }
            keys[hole] = moved
            values[hole] = values[next]
            keys[next] = Self.empty
            hole = next
        }
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldValues = values
        keys = [UInt64](repeating: Self.empty, count: oldKeys.count * 2)
        values = [Int32](repeating: -1, count: oldKeys.count * 2)
        shift -= 1
        count = 0
        for (key, value) in zip(oldKeys, oldValues) where key != Self.empty { insert(key, value) }
    }
}
