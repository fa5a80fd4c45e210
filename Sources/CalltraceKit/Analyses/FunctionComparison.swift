/// Two sets of runs compared function by function (`FunctionKey`): what `diff` shows.
///
/// A function's total is its mean total per run (runs it did not appear in count as zero), so a
/// baseline of 3 runs compares with 5 new runs; calls likewise; p90 is of the per-call costs of all
/// runs. A change counts only when it exceeds both `noiseShare` of the baseline's total and
/// `noiseFloor`; a new or gone function only when its total exceeds `noiseFloor`. The rest is noise.
public struct FunctionComparison: Sendable {
    public enum Change: String, Sendable {
        case regression, improvement, new, gone, noise
    }

    public struct Row: Sendable {
        public var key: FunctionKey
        public var change: Change
        /// Mean totals per run.
        public var baseTotal: Nanoseconds
        public var newTotal: Nanoseconds
        /// Mean calls per run.
        public var baseCalls: Double
        public var newCalls: Double
        public var baseP90: Nanoseconds
        public var newP90: Nanoseconds

        public var delta: Nanoseconds { newTotal - baseTotal }
        /// The change in tenths of a percent of the baseline's total; nil when that is zero.
        public var deltaPermille: Int64? {
            baseTotal.value > 0 ? Int64((Double(delta.value) * 1000 / Double(baseTotal.value)).rounded()) : nil
        }
    }

    /// Regressions (largest increase first), improvements (largest decrease first), new functions,
    /// gone functions (each largest total first), then noise (largest new total first).
    public private(set) var rows: [Row] = []
    public var base: FunctionStatistics
    public var new: FunctionStatistics

    public init(base: FunctionStatistics, new: FunctionStatistics, noiseShare: Double, noiseFloor: Nanoseconds) {
        self.base = base
        self.new = new
        func perRun(_ total: Nanoseconds, _ runs: Int) -> Nanoseconds {
            runs > 0 ? Nanoseconds(total.value / Int64(runs)) : .zero
        }
        var keys = Set(base.rows.map(\.key))
        keys.formUnion(new.rows.map(\.key))
        for key in keys {
            let before = base.row(key), after = new.row(key)
            var row = Row(key: key, change: .noise,
                          baseTotal: perRun(before?.total ?? .zero, base.runs),
                          newTotal: perRun(after?.total ?? .zero, new.runs),
                          baseCalls: base.runs > 0 ? Double(before?.calls ?? 0) / Double(base.runs) : 0,
                          newCalls: new.runs > 0 ? Double(after?.calls ?? 0) / Double(new.runs) : 0,
                          baseP90: before?.percentile(90) ?? .zero, newP90: after?.percentile(90) ?? .zero)
            let size = row.delta.value.magnitude
            let overFloor = size > noiseFloor.value.magnitude
            if before == nil {
                row.change = overFloor ? .new : .noise
            } else if after == nil {
                row.change = overFloor ? .gone : .noise
            } else if overFloor && Double(size) > noiseShare * Double(row.baseTotal.value) {
                row.change = row.delta.value > 0 ? .regression : .improvement
            }
            rows.append(row)
        }
        let order: [Change: Int] = [.regression: 0, .improvement: 1, .new: 2, .gone: 3, .noise: 4]
        func size(_ row: Row) -> Int64 {
            switch row.change {
            case .regression: return row.delta.value
            case .improvement: return -row.delta.value
            case .new, .noise: return row.newTotal.value
            case .gone: return row.baseTotal.value
            }
        }
        rows.sort { a, b in
            if a.change != b.change { return order[a.change, default: 4] < order[b.change, default: 4] }
            let (sa, sb) = (size(a), size(b))
            return sa != sb ? sa > sb : a.key < b.key
        }
    }
}
