/// Two sets of runs compared function by function (`FunctionKey`): what `diff` shows.
///
/// A function's total is its mean total per run (runs it did not appear in count as zero), so a
/// baseline of 3 runs compares with 5 new runs; calls likewise; p90 is of the per-call costs of all
/// runs. Which changes count, as Go's benchstat decides:
/// - Several runs a side (enough for a verdict at `alpha`: 4 a side at 0.05): each function's
///   per-run totals are compared with a Mann-Whitney U test (`MannWhitneyU`). A change counts when
///   it is significant (p < `alpha`) and larger than `noiseFloor`; the rest is noise (`~`), however
///   large it looks, since runs that vary that much cannot tell it from chance.
/// - One run a side, or too few for any verdict (`tooFewRuns`): a change counts only when it
///   exceeds both `noiseShare` of the baseline's total and `noiseFloor`.
/// A new or gone function is judged the same way (its runs on the other side count as zero).
public struct FunctionComparison: Sendable {
    public enum Change: String, Sendable {
        case regression, improvement, new, gone, noise
    }

    /// How changes were told from noise.
    public enum Method: Sendable, Equatable {
        /// Fixed thresholds: one run a side, or too few runs for a verdict.
        case threshold
        /// The Mann-Whitney U test at this significance level.
        case mannWhitney(alpha: Double)
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
        /// The test's p-value (with `.mannWhitney`).
        public var pValue: Double?
        /// How far the runs of each side stray from their mean total: the largest deviation, as a
        /// share of the mean (nil with one run, or a zero mean).
        public var baseSpread: Double?
        public var newSpread: Double?

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
    public private(set) var method = Method.threshold
    /// Several runs a side, but too few for the test to reach `alpha` whatever the data (its
    /// smallest possible p-value): the fixed thresholds decided.
    public private(set) var tooFewRuns: (smallestPValue: Double, alpha: Double)?

    public init(base: FunctionStatistics, new: FunctionStatistics, noiseShare: Double, noiseFloor: Nanoseconds,
                alpha: Double = 0.05) {
        self.base = base
        self.new = new
        func perRun(_ total: Nanoseconds, _ runs: Int) -> Nanoseconds {
            runs > 0 ? Nanoseconds(total.value / Int64(runs)) : .zero
        }
        // Each run's total; runs the function did not appear in count as zero.
        func samples(_ row: FunctionStatistics.Row?, runs: Int) -> [Double] {
            let totals = (row?.runTotals ?? []).map(Double.init)
            return totals + [Double](repeating: 0, count: Swift.max(0, runs - totals.count))
        }
        func spread(_ sample: [Double]) -> Double? {
            guard sample.count > 1 else { return nil }
            let mean = sample.reduce(0, +) / Double(sample.count)
            guard mean > 0 else { return nil }
            return sample.map { abs($0 - mean) }.max().map { $0 / mean }
        }
        if base.runs >= 2 && new.runs >= 2 {
            let smallest = MannWhitneyU.smallestPValue(base.runs, new.runs)
            if smallest < alpha { method = .mannWhitney(alpha: alpha) } else { tooFewRuns = (smallest, alpha) }
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
            let counts: Bool
            if case .mannWhitney(let alpha) = method {
                let x = samples(before, runs: base.runs), y = samples(after, runs: new.runs)
                row.pValue = MannWhitneyU(x, y)?.pValue
                row.baseSpread = spread(x)
                row.newSpread = spread(y)
                counts = overFloor && (row.pValue ?? 1) < alpha
            } else {
                counts = overFloor && (before == nil || after == nil || Double(size) > noiseShare * Double(row.baseTotal.value))
            }
            if counts {
                row.change = before == nil ? .new : after == nil ? .gone : row.delta.value > 0 ? .regression : .improvement
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
