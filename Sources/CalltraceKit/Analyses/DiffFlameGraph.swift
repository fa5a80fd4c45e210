/// Two sets of runs merged by stack for a differential flame graph: one trie over both, whose node
/// is a stack of functions by identity (`FunctionKey`: name and module, never addresses), every
/// thread of a run under node 0 (the program). Each node holds its inclusive and self time in
/// every run of each side (zero for a run that never had that stack), so each frame's change of
/// self time per run can be judged as `diff` judges a function's total (`FunctionComparison`): a
/// Mann-Whitney U test with several runs a side, else the fixed noise thresholds.
struct DiffFlameGraph {
    enum Change { case slower, faster, unchanged }

    private(set) var keys: [FunctionKey] = []           // per node; node 0's is empty
    private(set) var parent: [Int32] = [-1]
    private(set) var depth: [Int32] = [0]
    /// Per node, per run: inclusive and self nanoseconds.
    private(set) var baseTotal: [[Int64]] = [[]], baseSelf: [[Int64]] = [[]]
    private(set) var newTotal: [[Int64]] = [[]], newSelf: [[Int64]] = [[]]
    let baseRuns: Int, newRuns: Int
    private var nodeOf: [NodeKey: Int32] = [:]

    private struct NodeKey: Hashable {
        var parent: Int32
        var key: FunctionKey
    }

    init(base: [Profile], new: [Profile]) {
        keys = [FunctionKey(module: "", name: "")]
        baseRuns = base.count
        newRuns = new.count
        for (run, profile) in base.enumerated() { add(profile, run: run, isNew: false) }
        for (run, profile) in new.enumerated() { add(profile, run: run, isNew: true) }
    }

    var count: Int { parent.count }

    private mutating func node(_ up: Int32, _ key: FunctionKey) -> Int32 {
        let nodeKey = NodeKey(parent: up, key: key)
        if let known = nodeOf[nodeKey] { return known }
        let here = Int32(parent.count)
        nodeOf[nodeKey] = here
        keys.append(key)
        parent.append(up)
        depth.append(depth[Int(up)] + 1)
        baseTotal.append([]); baseSelf.append([])
        newTotal.append([]); newSelf.append([])
        return here
    }

    private mutating func add(_ profile: Profile, run: Int, isNew: Bool) {
        let runs = isNew ? newRuns : baseRuns
        func record(_ node: Int, total: Int64, selfTime: Int64) {
            if isNew {
                if newTotal[node].isEmpty { newTotal[node] = [Int64](repeating: 0, count: runs); newSelf[node] = newTotal[node] }
                newTotal[node][run] &+= total
                newSelf[node][run] &+= selfTime
            } else {
                if baseTotal[node].isEmpty { baseTotal[node] = [Int64](repeating: 0, count: runs); baseSelf[node] = baseTotal[node] }
                baseTotal[node][run] &+= total
                baseSelf[node][run] &+= selfTime
            }
        }
        let functionKeys = profile.functions.map(\.key)
        for thread in profile.threads where thread.count > 0 {
            var path: [Int32] = []
            thread.forEachPreOrder { call, treeDepth in
                if path.count > treeDepth { path.removeLast(path.count - treeDepth) }
                let here = node(path.last ?? 0, functionKeys[Int(thread.function[call])])
                let cost = max(thread.cost(call).value, 0)
                record(Int(here), total: cost, selfTime: max(thread.selfTime(call).value, 0))
                if treeDepth == 0 { record(0, total: cost, selfTime: 0) }
                path.append(here)
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
        for node in 1..<count { children[Int(parent[node])].append(Int32(node)) }
        for index in children.indices {
            children[index].sort { (keys[Int($0)].name, keys[Int($0)].module, $0) < (keys[Int($1)].name, keys[Int($1)].module, $1) }
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
        var names: [String] = []
        var at = node
        while at > 0 {
            names.append(keys[at].name)
            at = Int(parent[at])
        }
        return names.reversed()
    }
}
