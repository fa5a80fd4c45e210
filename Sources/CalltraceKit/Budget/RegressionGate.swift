/// `check --baseline BASE --max-regression 20%`: new runs held to a baseline's, failing on a
/// significant slowdown past a tolerance. It judges what `diff` judges, with diff's code
/// (`FunctionComparison`, the noise floor and `alpha` the same), and adds the tolerance:
///
/// - What is compared: each function both sides recorded (by name and module, as `diff` matches
///   them), by its total per run (the mean over the runs; a run without a call counts as zero), and
///   the whole run (from process start to exit). A function only one side has is not held to the
///   tolerance (a ratio to nothing means nothing); its time shows in its callers and the whole run.
///   The whole run is left out, with a warning, when a run did not record its exit (killed, still
///   running): its length is not known.
/// - A line fails when the change is a regression as `diff` calls it (several runs a side: the
///   Mann-Whitney U test's p under `alpha`; the change over the noise floor) and larger than
///   `tolerance` of the baseline's total.
/// - Too few runs for the test (one a side; 3 a side at 0.05, whose best p-value is 0.1): a
///   warning says how many it needs, and the plain ratio decides, as the user would by hand: over
///   the tolerance and the floor fails. One run of noise can then decide either way.
public struct RegressionGate {
    public let tolerance: Double
    public let alpha: Double
    public let noiseFloor: Nanoseconds
    private var base = Side()
    private var new = Side()

    /// One side's runs: their functions, the whole runs as one function (whose one call lasts
    /// from start to exit), the programs they ran.
    private struct Side {
        var functions = FunctionStatistics()
        var wholeRuns = FunctionStatistics()
        var runsWithoutExit = 0
        var programs: [String] = []

        mutating func add(_ profile: Profile) {
            functions.add(profile)
            let program = profile.program.split(separator: "/").last.map(String.init) ?? ""
            if !program.isEmpty && !programs.contains(program) { programs.append(program) }
            if let ended = profile.ended {
                wholeRuns.add(RegressionGate.wholeRun(lasting: ended.sinceStart))
            } else {
                runsWithoutExit += 1
            }
        }

        mutating func finish() {
            functions.finish()
            wholeRuns.finish()
        }
    }

    public init(tolerance: Double, alpha: Double = 0.05, noiseFloor: Nanoseconds = Nanoseconds(100_000)) {
        self.tolerance = tolerance
        self.alpha = alpha
        self.noiseFloor = noiseFloor
    }

    /// Adds a run of the baseline.
    public mutating func addBaseline(_ profile: Profile) { base.add(profile) }

    /// Adds a run to hold to the baseline.
    public mutating func add(_ profile: Profile) { new.add(profile) }

    /// Why the two sides cannot be compared: they ran different programs (nil when they did not,
    /// or a trace does not say).
    public var programMismatch: String? {
        guard !base.programs.isEmpty, !new.programs.isEmpty, Set(base.programs) != Set(new.programs) else { return nil }
        return "the baseline ran \(base.programs.joined(separator: ", ")) but the new runs ran "
            + "\(new.programs.joined(separator: ", ")): a baseline must be runs of the same program"
    }

    /// The outcome, and the line that says it passed.
    public struct Verdict {
        /// One outcome per line compared (the whole run first, then the functions, regressions
        /// first); violations and warnings name the gate as `name`.
        public var check: BudgetCheck
        /// `after/ against before/: nothing more than 20% slower (...)`.
        public var summary: String
    }

    /// Judges the runs added; `name` names the gate in messages (`after/ against before/`).
    public mutating func verdict(name: String) -> Verdict {
        base.finish()
        new.finish()
        var check = BudgetCheck(violations: [], warnings: [], outcomes: [])
        let allowed = Self.percent(tolerance)
        func compare(_ base: FunctionStatistics, _ new: FunctionStatistics) -> FunctionComparison {
            FunctionComparison(base: base, new: new, noiseShare: tolerance, noiseFloor: noiseFloor, alpha: alpha)
        }
        let functions = compare(base.functions, new.functions)
        let tested = functions.method != .threshold
        let runs = "\(base.functions.runs) run\(base.functions.runs == 1 ? "" : "s") against \(new.functions.runs)"
        let evidence = tested ? "" : "by ratio: too few runs for a test"
        if !tested {
            check.warnings.append("\(name): not enough runs for a significance test (need \(Self.runsNeeded(alpha)) per side at "
                                  + "--alpha \(DiffTextView.number(alpha)), have \(runs)): a plain ratio decides, and one "
                                  + "run's noise can pass or fail the gate")
        }
        func judge(_ row: FunctionComparison.Row, subject: String) {
            let line = "regression: \(subject) at most \(allowed) slower"
            let over = row.change == .regression && Double(row.delta.value) > tolerance * Double(row.baseTotal.value)
            guard over else {
                check.outcomes.append(.init(name: line, measured: row.newTotal, result: .passed))
                return
            }
            let change = row.deltaPermille.map(DiffTextView.percent) ?? "from zero"
            let why = row.pValue.map { "p = " + DiffTextView.pValue($0) } ?? evidence
            check.violations.append("\(name): \(subject) took \(TextFormat.milliseconds(row.newTotal)) ms per run, baseline "
                                    + "\(TextFormat.milliseconds(row.baseTotal)) ms: \(change) (\(why)), over the \(allowed) allowed")
            check.outcomes.append(.init(name: line, measured: row.newTotal,
                                        result: .failed(check.violations[check.violations.count - 1])))
        }
        var compared: [String] = []
        let runsWithoutExit = base.runsWithoutExit + new.runsWithoutExit
        if runsWithoutExit == 0 {
            for row in compare(base.wholeRuns, new.wholeRuns).rows { judge(row, subject: "the whole run") }
            compared.append("the whole run")
        } else {
            check.warnings.append("\(name): the whole run is not compared: \(runsWithoutExit) run"
                                  + "\(runsWithoutExit == 1 ? "" : "s") did not record the program's exit (killed, or still running)")
            check.outcomes.append(.init(name: "regression: the whole run at most \(allowed) slower", measured: nil,
                                        result: .skipped(check.warnings[check.warnings.count - 1])))
        }
        let names = FunctionNames(functions.rows.map(\.key))
        var count = 0
        for row in functions.rows where row.baseCalls > 0 && row.newCalls > 0 {
            judge(row, subject: names.name(row.key))
            count += 1
        }
        compared.append("\(count) function\(count == 1 ? "" : "s")")
        let method = tested ? "Mann-Whitney U test at p < \(DiffTextView.number(alpha))" : evidence
        return Verdict(check: check, summary: "\(name): nothing more than \(allowed) slower "
                       + "(\(compared.joined(separator: " and ")); \(runs), \(method))")
    }

    /// The fewest runs a side for which the test can reach `alpha` (4 at 0.05).
    static func runsNeeded(_ alpha: Double) -> Int {
        var runs = 2
        while MannWhitneyU.smallestPValue(runs, runs) >= alpha && runs < 1000 { runs += 1 }
        return runs
    }

    /// `20%`, `12.5%`.
    static func percent(_ share: Double) -> String { DiffTextView.number(share * 100) + "%" }

    /// A profile of one call lasting `duration`: the whole run as a function, so that it is judged
    /// by the same comparison as the functions.
    fileprivate static func wholeRun(lasting duration: Nanoseconds) -> Profile {
        var thread = ProfileThread(tid: 0, name: "", isMain: true)
        thread.function = [0]
        thread.overhead = [0]
        thread.depthAndFlags = [0]
        thread.roots = [0]
        thread.firstChild = [-1]
        thread.nextSibling = [-1]
        thread.parent = [-1]
        thread.setTimes(start: [0], cost: [duration.value])
        return Profile(functions: [ProfileFunction(name: "(whole run)")], threads: [thread])
    }
}
