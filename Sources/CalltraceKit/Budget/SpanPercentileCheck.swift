/// `[spans]` percentiles (`"open document".p90 = "200ms"`), held over every trace given together:
/// a p90 over one run says little. Only finished spans count (an unfinished one has no duration;
/// its time open is held to the max limit, per trace, by `BudgetCheck`). Nearest rank, as `spans`
/// computes it, so the two always agree. A name with no finished span is a warning.
public struct SpanPercentileCheck {
    private let limits: [Budget.SpanLimit]
    private var durations: [[Int64]]
    private var traces = 0

    public init(_ budget: Budget) {
        limits = budget.spans.filter { !$0.percentiles.isEmpty }
        durations = Array(repeating: [], count: limits.count)
    }

    /// Whether there is anything to check (the budget sets percentiles).
    public var isEmpty: Bool { limits.isEmpty }

    public mutating func add(_ profile: Profile) {
        traces += 1
        guard !limits.isEmpty else { return }
        let index = Dictionary(limits.enumerated().map { ($1.name, $0) }) { first, _ in first }
        for span in profile.spans {
            guard let row = index[span.name], let duration = span.duration else { continue }
            durations[row].append(duration.value)
        }
    }

    /// The suite's name in messages and reports: `3 traces`.
    public var name: String { "\(traces) trace\(traces == 1 ? "" : "s")" }

    /// The outcome of every percentile line, in the budget's order.
    public func check() -> BudgetCheck {
        var violations: [String] = [], warnings: [String] = [], outcomes: [BudgetCheck.Outcome] = []
        for (row, span) in limits.enumerated() {
            let sorted = durations[row].sorted()
            for percentile in span.percentiles {
                let line = "spans: \"\(span.name)\" p\(percentile.rank) at most \(BudgetCheck.milliseconds(percentile.limit))"
                guard !sorted.isEmpty else {
                    warnings.append("\(name): span \"\(span.name)\" never finished: p\(percentile.rank) not checked")
                    outcomes.append(.init(name: line, measured: nil, result: .skipped(warnings[warnings.count - 1])))
                    continue
                }
                let value = FunctionStatistics.percentile(percentile.rank, of: sorted)
                if value > percentile.limit {
                    violations.append("\(name): span \"\(span.name)\" p\(percentile.rank) was \(TextFormat.milliseconds(value)) ms "
                                      + "over \(sorted.count) span\(sorted.count == 1 ? "" : "s"), "
                                      + "budget \(BudgetCheck.milliseconds(percentile.limit))")
                    outcomes.append(.init(name: line, measured: value, result: .failed(violations[violations.count - 1])))
                } else {
                    outcomes.append(.init(name: line, measured: value, result: .passed))
                }
            }
        }
        return BudgetCheck(violations: violations, warnings: warnings, outcomes: outcomes)
    }
}
