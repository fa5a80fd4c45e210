/// A profile held to a `Budget`: one line per limit it exceeds, and warnings for limits it cannot
/// show either way.
///
/// - `[calls]`: a budget names functions by name: `load_assets` also covers a C++ `load_assets(int)`
///   (the name before its parameters), in any module. The worst call is compared (unfinished ones
///   too: they took at least that long). A budgeted function with no recorded call is a warning,
///   not a violation: it may not have run, or ran under the recording threshold; a budget under
///   the recording threshold is a warning too (calls between the two were not recorded).
/// - `[marks]`: the first mark of the name, from process start. A budgeted mark that never came is
///   a violation (the program never got there).
/// - `[frames]`: dropped frames as `hitches` counts them (`Hitches`); a trace with fewer than two
///   frames, or no target interval, is a warning.
/// - `[spans]` max: the longest span of the name in the trace. A span still open when the trace
///   ends counts with the time it was open, when that is over the limit (it took at least that
///   long: a violation); under it, it is not counted either way. A budgeted span that never began
///   is a warning, as a function that did not run. Percentiles are held over every trace given
///   together (`PercentileCheck`), not here.
public struct BudgetCheck {
    public var violations: [String] = []
    public var warnings: [String] = []
    /// One per budget line, in the budget's order: what a JUnit report lists (`JUnitReport`).
    public var outcomes: [Outcome] = []

    /// A budget line held against the trace.
    public struct Outcome: Sendable, Equatable {
        public enum Result: Sendable, Equatable {
            case passed
            /// The violation, as `violations` words it.
            case failed(String)
            /// Why the line could not be judged (the warning).
            case skipped(String)
        }
        /// `calls: load_assets at most 50 ms`, `marks: "first frame" by 400 ms`.
        public var name: String
        /// What was measured (`62.10 ms`), when something was.
        public var measured: Nanoseconds?
        public var result: Result
    }

    public init(_ profile: Profile, budget: Budget, name: String) {
        checkCalls(profile, budget, name)
        checkMarks(profile, budget, name)
        checkFrames(profile, budget, name)
        checkSpans(profile, budget, name)
    }

    /// The outcomes of a check made elsewhere (`PercentileCheck`, `RegressionGate`), for a report.
    public init(violations: [String], warnings: [String], outcomes: [Outcome]) {
        self.violations = violations
        self.warnings = warnings
        self.outcomes = outcomes
    }

    public var passed: Bool { violations.isEmpty }

    /// `50 ms`, `0.25 ms`.
    static func milliseconds(_ time: Nanoseconds) -> String {
        var text = TextFormat.fixed(time.value, scale: 6, decimals: 3)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text + " ms"
    }

    private mutating func checkCalls(_ profile: Profile, _ budget: Budget, _ name: String) {
        guard !budget.calls.isEmpty else { return }
        var worst = [Int64](repeating: -1, count: budget.calls.count)
        var calls = [Int](repeating: 0, count: budget.calls.count)
        var over = [Int](repeating: 0, count: budget.calls.count)
        Self.forEachCall(of: budget.calls.map(\.name), in: profile) { limit, cost in
            calls[limit] += 1
            worst[limit] = max(worst[limit], cost)
            if cost > budget.calls[limit].limit.value { over[limit] += 1 }
        }
        for (index, limit) in budget.calls.enumerated() {
            if limit.limit < profile.threshold {
                warnings.append("\(name): the budget of \(limit.name) (\(Self.milliseconds(limit.limit))) is under "
                                + "the recording threshold (\(Self.milliseconds(profile.threshold))): calls between "
                                + "the two were not recorded")
            }
            let line = "calls: \(limit.name) at most \(Self.milliseconds(limit.limit))"
            if calls[index] == 0 {
                let why = profile.threshold > .zero
                    ? "it did not run, or ran under the recording threshold of \(Self.milliseconds(profile.threshold))"
                    : "it did not run"
                warnings.append("\(name): \(limit.name) has no recorded call (\(why))")
                outcomes.append(Outcome(name: line, measured: nil, result: .skipped(warnings[warnings.count - 1])))
            } else if over[index] > 0 {
                let count = calls[index] > 1 ? " (\(over[index]) of \(calls[index]) calls over)" : ""
                violations.append("\(name): \(limit.name) took \(TextFormat.milliseconds(Nanoseconds(worst[index]))) ms, "
                                  + "budget \(Self.milliseconds(limit.limit))\(count)")
                outcomes.append(Outcome(name: line, measured: Nanoseconds(worst[index]),
                                        result: .failed(violations[violations.count - 1])))
            } else {
                outcomes.append(Outcome(name: line, measured: Nanoseconds(worst[index]), result: .passed))
            }
        }
    }

    /// Every call of a function `names` covers, with the index of the name covering it and the
    /// call's cost in nanoseconds: `load_assets` covers `load_assets` and a C++ `load_assets(int)`
    /// (the name before its parameters), in any module.
    static func forEachCall(of names: [String], in profile: Profile, _ body: (_ name: Int, _ cost: Int64) -> Void) {
        let nameIndex = Dictionary(names.enumerated().map { ($1, $0) }) { first, _ in first }
        // Each function of the profile to the name covering it, if any.
        let nameOf: [Int] = profile.functions.map { function in
            let bare = function.name.split(separator: "(", maxSplits: 1).first.map(String.init) ?? function.name
            return nameIndex[function.name] ?? nameIndex[bare] ?? -1
        }
        for thread in profile.threads {
            for call in 0..<thread.count {
                let name = nameOf[Int(thread.function[call])]
                if name >= 0 { body(name, thread.cost(call).value) }
            }
        }
    }

    private mutating func checkMarks(_ profile: Profile, _ budget: Budget, _ name: String) {
        guard !budget.marks.isEmpty else { return }
        if !profile.processStartKnown {
            warnings.append("\(name): the trace does not say when the process started: marks count from the "
                            + "runtime's start")
        }
        for limit in budget.marks {
            let line = "marks: \"\(limit.name)\" by \(Self.milliseconds(limit.limit))"
            guard let mark = profile.marks.filter({ $0.name == limit.name }).min(by: { $0.at < $1.at }) else {
                violations.append("\(name): mark \"\(limit.name)\" never came, budget \(Self.milliseconds(limit.limit))")
                outcomes.append(Outcome(name: line, measured: nil, result: .failed(violations[violations.count - 1])))
                continue
            }
            if mark.at.sinceStart > limit.limit {
                violations.append("\(name): mark \"\(limit.name)\" came at "
                                  + "\(TextFormat.milliseconds(mark.at.sinceStart)) ms, budget \(Self.milliseconds(limit.limit))")
                outcomes.append(Outcome(name: line, measured: mark.at.sinceStart, result: .failed(violations[violations.count - 1])))
            } else {
                outcomes.append(Outcome(name: line, measured: mark.at.sinceStart, result: .passed))
            }
        }
    }

    private mutating func checkFrames(_ profile: Profile, _ budget: Budget, _ name: String) {
        guard budget.maxDroppedAtOnce != nil || budget.maxDropEvents != nil else { return }
        let lines = [budget.maxDroppedAtOnce.map { "frames: at most \($0) dropped at once" },
                     budget.maxDropEvents.map { "frames: at most \($0) drop events" }].compactMap { $0 }
        guard profile.frames.count >= 2 else {
            warnings.append("\(name): fewer than two frames recorded: [frames] not checked")
            for line in lines { outcomes.append(Outcome(name: line, measured: nil, result: .skipped(warnings[warnings.count - 1]))) }
            return
        }
        guard profile.frameInterval > .zero else {
            warnings.append("\(name): the trace has no target frame interval: [frames] not checked")
            for line in lines { outcomes.append(Outcome(name: line, measured: nil, result: .skipped(warnings[warnings.count - 1]))) }
            return
        }
        let hitches = Hitches(profile: profile, interval: nil, limit: 1)
        if let limit = budget.maxDroppedAtOnce {
            let line = "frames: at most \(limit) dropped at once"
            if let worst = hitches.worst.first, worst.dropped > limit {
                violations.append("\(name): \(worst.dropped) frames dropped at once at \(TextFormat.milliseconds(worst.start.sinceStart)) ms "
                                  + "(an interval of \(TextFormat.milliseconds(worst.duration)) ms), budget \(limit)")
                outcomes.append(Outcome(name: line, measured: nil, result: .failed(violations[violations.count - 1])))
            } else {
                outcomes.append(Outcome(name: line, measured: nil, result: .passed))
            }
        }
        if let limit = budget.maxDropEvents {
            let line = "frames: at most \(limit) drop events"
            if hitches.dropEvents > limit {
                violations.append("\(name): \(hitches.dropEvents) drop events, budget \(limit)")
                outcomes.append(Outcome(name: line, measured: nil, result: .failed(violations[violations.count - 1])))
            } else {
                outcomes.append(Outcome(name: line, measured: nil, result: .passed))
            }
        }
    }

    private mutating func checkSpans(_ profile: Profile, _ budget: Budget, _ name: String) {
        for span in budget.spans {
            guard let limit = span.max else { continue }
            let line = "spans: \"\(span.name)\" at most \(Self.milliseconds(limit))"
            var finished = 0
            var worst: Nanoseconds?
            var over = 0
            var worstOpen: Nanoseconds?
            var openOver = 0
            var began = 0
            for instance in profile.spans where instance.name == span.name {
                began += 1
                if let duration = instance.duration {
                    finished += 1
                    worst = max(worst ?? duration, duration)
                    if duration > limit { over += 1 }
                } else if let ended = profile.ended, ended - instance.begin > limit {
                    worstOpen = max(worstOpen ?? .zero, ended - instance.begin)
                    openOver += 1
                }
            }
            if began == 0 {
                warnings.append("\(name): span \"\(span.name)\" never began")
                outcomes.append(Outcome(name: line, measured: nil, result: .skipped(warnings[warnings.count - 1])))
            } else if let open = worstOpen, open >= (worst ?? .zero) {
                violations.append("\(name): span \"\(span.name)\" was still open after \(TextFormat.milliseconds(open)) ms "
                                  + "when the trace ended, budget \(Self.milliseconds(limit))")
                outcomes.append(Outcome(name: line, measured: open, result: .failed(violations[violations.count - 1])))
            } else if let worst, over > 0 || worstOpen != nil {
                let count = began > 1 ? " (\(over + openOver) of \(began) spans over)" : ""
                violations.append("\(name): span \"\(span.name)\" took \(TextFormat.milliseconds(worst)) ms, "
                                  + "budget \(Self.milliseconds(limit))\(count)")
                outcomes.append(Outcome(name: line, measured: worst, result: .failed(violations[violations.count - 1])))
            } else {
                outcomes.append(Outcome(name: line, measured: worst, result: .passed))
            }
        }
    }
}
