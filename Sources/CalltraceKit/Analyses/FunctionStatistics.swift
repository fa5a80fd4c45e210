/// Per-function statistics over one or more runs, by `FunctionKey` (so the same function of several
/// runs, and of several threads, is one row): what `top` lists and `diff` compares.
///
/// - `calls`, `selfTime`: every recorded call.
/// - `total`: the time spent in the function, each call counted unless it ran inside another call
///   of the same function on the same thread (recursion would count its time twice).
/// - Per-call costs (`mean`, `p50` ... `max`): every recorded call's own total, recursive ones
///   included. Percentiles are by nearest rank: the p-th percentile of n sorted costs is the one at
///   rank ceil(p * n / 100), so it is always a cost that was measured.
/// - Per run (`runs`, `runTotals`): the function's `total` in each run it appeared in.
/// - `cpu`: the time on a CPU of the calls counted in `total` whose split is known
///   (`ProfileThread.split`: calls of a millisecond or more on a sampled thread); nil when none is.
///
/// Built by adding profiles one at a time: a profile can be dropped once added, and what is kept is
/// one `Int64` per call (the per-call costs, for the percentiles) and one per run.
public struct FunctionStatistics: Sendable {
    public struct Row: Sendable {
        public var key: FunctionKey
        public var calls: Int
        public var total: Nanoseconds
        public var selfTime: Nanoseconds
        public var cpu: Nanoseconds?
        /// Per-call costs, sorted once `finish()` ran.
        public fileprivate(set) var costs: [Int64] = []
        public fileprivate(set) var costSum: Int64 = 0
        /// The function's total in each run it appeared in, sorted once `finish()` ran.
        public fileprivate(set) var runTotals: [Int64] = []

        public var runs: Int { runTotals.count }
        public var mean: Nanoseconds { calls == 0 ? .zero : Nanoseconds(costSum / Int64(calls)) }
        public var max: Nanoseconds { Nanoseconds(costs.last ?? 0) }
        public func percentile(_ p: Int) -> Nanoseconds { FunctionStatistics.percentile(p, of: costs) }
        public func runPercentile(_ p: Int) -> Nanoseconds { FunctionStatistics.percentile(p, of: runTotals) }
    }

    public private(set) var rows: [Row] = []
    /// How many profiles were added.
    public private(set) var runs = 0
    /// The programs' file names, in the order they first appeared.
    public private(set) var programs: [String] = []
    public private(set) var callCount = 0
    /// Some function's `cpu` is known: `top` shows the column.
    public private(set) var hasCPU = false
    private var index: [FunctionKey: Int] = [:]
    private var sorted = true

    public init() {}

    public init(_ profiles: [Profile]) {
        for profile in profiles { add(profile) }
        finish()
    }

    /// The p-th percentile (0...100) of `sorted` by nearest rank; zero when it is empty.
    public static func percentile(_ p: Int, of sorted: [Int64]) -> Nanoseconds {
        guard !sorted.isEmpty else { return .zero }
        let rank = (Swift.max(0, Swift.min(p, 100)) * sorted.count + 99) / 100
        return Nanoseconds(sorted[Swift.max(rank, 1) - 1])
    }

    public mutating func add(_ profile: Profile) {
        runs += 1
        sorted = false
        if !programs.contains(profile.programName) { programs.append(profile.programName) }
        // The profile's function indexes to rows, made once per function.
        let rowOf: [Int] = profile.functions.map { function in
            let key = function.key
            if let row = index[key] { return row }
            index[key] = rows.count
            rows.append(Row(key: key, calls: 0, total: .zero, selfTime: .zero))
            return rows.count - 1
        }
        var runTotal = [Int64](repeating: 0, count: profile.functions.count)
        var ran = [Bool](repeating: false, count: profile.functions.count)
        var selfTotal = [Int64](repeating: 0, count: profile.functions.count)
        var calls = [Int](repeating: 0, count: profile.functions.count)
        var costSum = [Int64](repeating: 0, count: profile.functions.count)
        var cpuTotal = [Int64?](repeating: nil, count: profile.functions.count)
        // Room for the costs first: growing by doubling would hold up to twice what they need
        // (and copy them) while the profile is still in memory.
        var callsOf = [Int](repeating: 0, count: profile.functions.count)
        for thread in profile.threads {
            for f in thread.function { callsOf[Int(f)] += 1 }
        }
        for (f, count) in callsOf.enumerated() where count > 0 {
            let row = rowOf[f]
            let needed = rows[row].costs.count + count
            // Never exactly what one more run needs: reserving run after run would copy every time.
            if rows[row].costs.capacity < needed {
                rows[row].costs.reserveCapacity(rows[row].costs.isEmpty ? needed : Swift.max(needed, rows[row].costs.count * 3 / 2))
            }
        }
        // The rows out of `self` while the calls are added: appending to a local array's rows
        // skips the checks of `self`'s storage on every call.
        var table: [Row] = []
        swap(&table, &rows)
        defer { swap(&table, &rows) }
        for thread in profile.threads {
            callCount += thread.count
            // Pre-order with the open calls' functions: a call inside a call of its own function
            // adds nothing to the function's total.
            var openCount = [Int32](repeating: 0, count: profile.functions.count)
            thread.function.withUnsafeBufferPointer { function in
                thread.withCosts { total in
                    thread.forEachPreOrder({ call, _ in
                        let f = Int(function[call])
                        let cost = total[call]
                        if openCount[f] == 0 {
                            runTotal[f] &+= cost
                            if let split = thread.split(call) { cpuTotal[f] = (cpuTotal[f] ?? 0) &+ split.cpu.value }
                        }
                        openCount[f] += 1
                        ran[f] = true
                        calls[f] += 1
                        costSum[f] &+= cost
                        table[rowOf[f]].costs.append(cost)
                    }, closing: { call, time in
                        let f = Int(function[call])
                        openCount[f] -= 1
                        selfTotal[f] &+= time.value
                    })
                }
            }
        }
        // Two functions of one profile may share a key (same name in two builds of a module):
        // their run totals add up before they join the run's distribution.
        var keyTotals: [Int: Int64] = [:]
        for f in 0..<profile.functions.count where ran[f] {
            let row = rowOf[f]
            table[row].calls += calls[f]
            table[row].costSum &+= costSum[f]
            table[row].total = table[row].total + Nanoseconds(runTotal[f])
            table[row].selfTime = table[row].selfTime + Nanoseconds(selfTotal[f])
            if let cpu = cpuTotal[f] {
                table[row].cpu = (table[row].cpu ?? .zero) + Nanoseconds(cpu)
                hasCPU = true
            }
            keyTotals[row, default: 0] &+= runTotal[f]
        }
        for (row, total) in keyTotals { table[row].runTotals.append(total) }
    }

    /// Sorts the per-call costs and run totals (after the last `add`).
    public mutating func finish() {
        guard !sorted else { return }
        for row in rows.indices {
            RadixSort.sort(&rows[row].costs)
            rows[row].runTotals.sort()
        }
        // A function seen only in calls that were filtered away has no calls: leave it out.
        rows.removeAll { $0.calls == 0 }
        index = Dictionary(uniqueKeysWithValues: rows.enumerated().map { ($1.key, $0) })
        sorted = true
    }

    public func row(_ key: FunctionKey) -> Row? { index[key].map { rows[$0] } }

    /// The rows in the order `sort` asks for: largest first (names A to Z for `.name`), ties by name.
    public func rows(by sort: TopSort) -> [Row] {
        func value(_ row: Row) -> Int64 {
            switch sort {
            case .total: return row.total.value
            case .self: return row.selfTime.value
            case .cpu: return row.cpu?.value ?? -1
            case .calls: return Int64(row.calls)
            case .mean: return row.mean.value
            case .p50: return row.percentile(50).value
            case .p90: return row.percentile(90).value
            case .p95: return row.percentile(95).value
            case .p99: return row.percentile(99).value
            case .max: return row.max.value
            case .name: return 0
            }
        }
        let keyed = rows.map { (value($0), $0) }
        return keyed.sorted { a, b in a.0 != b.0 ? a.0 > b.0 : a.1.key < b.1.key }.map { $0.1 }
    }
}
