/// The percentiles of `[calls]` and `[spans]` (`load_assets.p90 = "60ms"`, `"save".p90 = "200ms"`),
/// held over every trace given together: a p90 over one run says little. Nearest rank, as `top`
/// and `spans` compute them, so the two always agree.
/// - `[spans]`: of the name's finished spans. An unfinished one has no duration; its time open is
///   held to the max limit, per trace, by `BudgetCheck`.
/// - `[calls]`: of the function's worst call in each trace, the call `BudgetCheck` holds to the max
///   (unfinished calls too; names cover C++ parameters and every module). With 10 runs, p90 is the
///   second-worst run's worst call: one slow run passes, two do not. A trace with no recorded call
///   of the function is left out, as a trace without the span is.
/// A name with no value in any trace is a warning.
public struct PercentileCheck {
    private enum Table { case calls, spans }
    private let rows: [(table: Table, limits: Budget.NameLimits)]
    /// Per row: the values gathered so far.
    private var values: [[Int64]]
    private var traces = 0

    public init(_ budget: Budget) {
        rows = budget.callPercentiles.map { (.calls, $0) }
            + budget.spans.filter { !$0.percentiles.isEmpty }.map { (.spans, $0) }
        values = Array(repeating: [], count: rows.count)
    }

    /// Whether there is anything to check (the budget sets percentiles).
    public var isEmpty: Bool { rows.isEmpty }

    public mutating func add(_ profile: Profile) {
        traces += 1
        let calls = rows.indices.filter { rows[$0].table == .calls }
        if !calls.isEmpty {
            var worst = [Int64](repeating: -1, count: calls.count)
            BudgetCheck.forEachCall(of: calls.map { rows[$0].limits.name }, in: profile) { index, cost in
                worst[index] = max(worst[index], cost)
            }
            for (index, cost) in worst.enumerated() where cost >= 0 { values[calls[index]].append(cost) }
        }
        let spans = Dictionary(rows.indices.filter { rows[$0].table == .spans }.map { (rows[$0].limits.name, $0) }) { first, _ in first }
        guard !spans.isEmpty else { return }
        for span in profile.spans {
            guard let row = spans[span.name], let duration = span.duration else { continue }
            values[row].append(duration.value)
        }
    }

    /// The suite's name in messages and reports: `3 traces`.
    public var name: String { "\(traces) trace\(traces == 1 ? "" : "s")" }

    /// The outcome of every percentile line, calls then spans, each in the budget's order.
    public func check() -> BudgetCheck {
        var violations: [String] = [], warnings: [String] = [], outcomes: [BudgetCheck.Outcome] = []
        for (row, (table, limits)) in rows.enumerated() {
            let sorted = values[row].sorted()
            let calls = table == .calls
            let subject = calls ? limits.name : "span \"\(limits.name)\""
            for percentile in limits.percentiles {
                let p = "p\(percentile.rank)", limit = BudgetCheck.milliseconds(percentile.limit)
                let line = calls ? "calls: \(limits.name) \(p) at most \(limit)" : "spans: \"\(limits.name)\" \(p) at most \(limit)"
                guard !sorted.isEmpty else {
                    warnings.append("\(name): \(subject) \(calls ? "has no recorded call" : "never finished"): \(p) not checked")
                    outcomes.append(.init(name: line, measured: nil, result: .skipped(warnings[warnings.count - 1])))
                    continue
                }
                let value = FunctionStatistics.percentile(percentile.rank, of: sorted)
                guard value > percentile.limit else {
                    outcomes.append(.init(name: line, measured: value, result: .passed))
                    continue
                }
                let over = sorted.count == 1 ? "" : "s"
                violations.append("\(name): \(subject) \(p)\(calls ? " of the worst call per trace" : "") was "
                                  + "\(TextFormat.milliseconds(value)) ms over \(sorted.count) "
                                  + (calls ? "trace\(over) with a call" : "span\(over)") + ", budget \(limit)")
                outcomes.append(.init(name: line, measured: value, result: .failed(violations[violations.count - 1])))
            }
        }
        return BudgetCheck(violations: violations, warnings: warnings, outcomes: outcomes)
    }
}
