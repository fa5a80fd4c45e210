/// Two sets of runs merged by stack for a differential flame graph: one trie over both, whose node
/// is a stack of functions by identity (`FunctionKey`: name and module, never addresses), every
/// thread of a run under node 0 (the program). Each node holds its inclusive and self time in
/// every run of each side (zero for a run that never had that stack), so each frame's change of
/// self time per run can be judged as `diff` judges a function's total (`FunctionComparison`): a
/// Mann-Whitney U test with several runs a side, else the fixed noise thresholds.
public struct DiffFlameGraph {
    enum Change { case slower, faster, unchanged }

    /// The stacks: per node the index of its function's key in `internedKeys` (-1 for node 0, the
    /// program) and the parent node, so that finding a call's node hashes two integers, never a
    /// name.
    private var trie = CallPathTrie()
    private var keyIndex: [FunctionKey: Int32] = [:]
    private var internedKeys: [FunctionKey] = []
    private(set) var depth: [Int32] = [0]
    /// Per node, per run: inclusive and self nanoseconds.
    private(set) var baseTotal: [[Int64]] = [[]], baseSelf: [[Int64]] = [[]]
    private(set) var newTotal: [[Int64]] = [[]], newSelf: [[Int64]] = [[]]
    public let baseRuns: Int, newRuns: Int
    /// The program of the first run added on each side, for the title.
    private(set) var baseProgram: String?, newProgram: String?
    private var baseAdded = 0, newAdded = 0

    /// `baseRuns` and `newRuns` profiles are to come (`add`), one at a time: each can be dropped once
    /// added, so many runs need the memory of one.
    public init(baseRuns: Int, newRuns: Int) {
        _ = trie.add(function: -1)
        self.baseRuns = baseRuns
        self.newRuns = newRuns
    }

    init(base: [Profile], new: [Profile]) {
        self.init(baseRuns: base.count, newRuns: new.count)
        for profile in base { add(profile, isNew: false) }
        for profile in new { add(profile, isNew: true) }
    }

    var count: Int { trie.count }
    var parent: [Int32] { trie.parent }

    /// The function of `node` by identity (node 0's is empty).
    func key(_ node: Int) -> FunctionKey {
        let index = Int(trie.function[node])
        return index < 0 ? FunctionKey(module: "", name: "") : internedKeys[index]
    }

    private mutating func node(_ up: Int32, _ key: Int32) -> Int32 {
        let here = trie.child(of: up, key)
        if Int(here) == depth.count {
            depth.append(depth[Int(up)] + 1)
            baseTotal.append([]); baseSelf.append([])
            newTotal.append([]); newSelf.append([])
        }
        return here
    }

    /// Adds the next run of one side (runs past the count given to `init` are ignored).
    public mutating func add(_ profile: Profile, isNew: Bool) {
        let run = isNew ? newAdded : baseAdded
        guard run < (isNew ? newRuns : baseRuns) else { return }
        if isNew {
            newAdded += 1
            if newProgram == nil { newProgram = profile.programName }
        } else {
            baseAdded += 1
            if baseProgram == nil { baseProgram = profile.programName }
        }
        let keyOf: [Int32] = profile.functions.map { function in
            let key = function.key
            if let known = keyIndex[key] { return known }
            let new = Int32(internedKeys.count)
            keyIndex[key] = new
            internedKeys.append(key)
            return new
        }
        // This run's sums per node, folded into the per-run columns at the end.
        var total = [Int64](repeating: 0, count: count), selfTime = total
        var seen = [Bool](repeating: false, count: count)
        for thread in profile.threads where thread.count > 0 {
            var path: [Int32] = []  // the open calls' nodes
            thread.forEachPreOrder({ call, treeDepth in
                let here = Int(node(path.last ?? 0, keyOf[Int(thread.function[call])]))
                if here >= seen.count {
                    total.append(0)
                    selfTime.append(0)
                    seen.append(false)
                }
                let cost = max(thread.cost(call).value, 0)
                total[here] &+= cost
                seen[here] = true
                if treeDepth == 0 {
                    total[0] &+= cost
                    seen[0] = true
                }
                path.append(Int32(here))
            }, closing: { _, time in
                selfTime[Int(path.removeLast())] &+= time.value
            })
        }
        let runs = isNew ? newRuns : baseRuns
        for node in seen.indices where seen[node] {
            if isNew {
                if newTotal[node].isEmpty { newTotal[node] = [Int64](repeating: 0, count: runs); newSelf[node] = newTotal[node] }
                newTotal[node][run] &+= total[node]
                newSelf[node][run] &+= selfTime[node]
            } else {
                if baseTotal[node].isEmpty { baseTotal[node] = [Int64](repeating: 0, count: runs); baseSelf[node] = baseTotal[node] }
                baseTotal[node][run] &+= total[node]
                baseSelf[node][run] &+= selfTime[node]
            }
        }
    }

    /// Mean per run of one side's values (zero without runs).
    static func mean(_ values: [Int64], runs: Int) -> Double {
        runs > 0 ? Double(values.reduce(0, &+)) / Double(runs) : 0
    }

    func meanNewTotal(_ node: Int) -> Double { Self.mean(newTotal[node], runs: newRuns) }
    func meanBaseTotal(_ node: Int) -> Double { Self.mean(baseTotal[node], runs: baseRuns) }
    func meanNewSelf(_ node: Int) -> Double { Self.mean(newSelf[node], runs: newRuns) }
    func meanBaseSelf(_ node: Int) -> Double { Self.mean(baseSelf[node], runs: baseRuns) }

    /// The change of `node`'s self time per run, and the test's p-value when one was made.
    func change(_ node: Int, noiseShare: Double, noiseFloor: Nanoseconds, alpha: Double) -> (Change, Double?) {
        let before = meanBaseSelf(node), after = meanNewSelf(node)
        let delta = after - before
        guard abs(delta) > Double(noiseFloor.value) else { return (.unchanged, nil) }
        let direction: Change = delta > 0 ? .slower : .faster
        if baseRuns >= 2 && newRuns >= 2 && MannWhitneyU.smallestPValue(baseRuns, newRuns) < alpha {
            func sample(_ values: [Int64], runs: Int) -> [Double] {
                values.isEmpty ? [Double](repeating: 0, count: runs) : values.map(Double.init)
            }
            let p = MannWhitneyU(sample(baseSelf[node], runs: baseRuns), sample(newSelf[node], runs: newRuns))?.pValue ?? 1
            return (p < alpha ? direction : .unchanged, p)
        }
        return (before == 0 || abs(delta) > noiseShare * before ? direction : .unchanged, nil)
    }

    /// Children of each node, ordered by name (a flame graph's order), from `parent`.
    func childrenByName() -> [[Int32]] {
        var children = [[Int32]](repeating: [], count: count)
        let parent = trie.parent
        for node in 1..<count { children[Int(parent[node])].append(Int32(node)) }
        for index in children.indices {
            children[index].sort { a, b in
                let (keyA, keyB) = (key(Int(a)), key(Int(b)))
                return (keyA.name, keyA.module, a) < (keyB.name, keyB.module, b)
            }
        }
        return children
    }

    /// The frames NEW drew (mean inclusive time per run of `minimumTime` or more), parents first,
    /// children side by side from their parent's left edge, as `FlameGraph.layout` places them.
    func layout(minimumTime: Double) -> [FlameGraph.Frame] {
        let children = childrenByName()
        var frames = [FlameGraph.Frame(node: 0, start: 0, end: meanNewTotal(0))]
        var index = 0
        while index < frames.count {
            let frame = frames[index]
            var cursor = frame.start
            for child in children[frame.node] {
                let time = meanNewTotal(Int(child))
                let end = min(cursor + time, frame.end)
                if time > 0, time >= minimumTime { frames.append(FlameGraph.Frame(node: Int(child), start: cursor, end: end)) }
                cursor = end
            }
            index += 1
        }
        return frames
    }

    /// The stack of `node` as names, outermost first.
    func stack(_ node: Int) -> [String] {
        trie.path(to: Int32(node)).map { internedKeys[Int($0)].name }
    }
}
