/// `check --junit FILE`: the budget checks as a JUnit XML report, the format GitLab, Jenkins and
/// GitHub's test reporters display: one `<testsuite>` per trace, one `<testcase>` per budget line,
/// a `<failure>` with the violation (the measured value and the limit), a `<skipped>` with the reason
/// for a line that could not be judged (a function that never ran); `time` is the measured value in
/// seconds when there is one. Span percentiles, held over every trace together, are one more suite
/// named for the traces (`3 traces`, `PercentileCheck`). The gate against a baseline
/// (`RegressionGate`) is one more suite, a case per function compared.
///
/// ```
/// <?xml version="1.0" encoding="UTF-8"?>
/// <testsuites name="calltrace check" tests="2" failures="1" skipped="0">
///   <testsuite name="runs/a.trace" tests="2" failures="1" skipped="0">
///     <testcase classname="calltrace.check" name="calls: load_assets at most 50 ms" time="0.062100">
///       <failure type="budget" message="runs/a.trace: load_assets took 62.10 ms, budget 50 ms"/>
///     </testcase>
///     <testcase classname="calltrace.check" name="marks: &quot;first frame&quot; by 400 ms" time="0.312000"/>
///   </testsuite>
/// </testsuites>
/// ```
public struct JUnitReport {
    private var suites: [(name: String, outcomes: [BudgetCheck.Outcome])] = []

    public init() {}

    public mutating func add(trace name: String, _ check: BudgetCheck) {
        suites.append((name, check.outcomes))
    }

    public var xml: String {
        func count(_ outcomes: [BudgetCheck.Outcome]) -> (tests: Int, failures: Int, skipped: Int) {
            var failures = 0, skipped = 0
            for outcome in outcomes {
                if case .failed = outcome.result { failures += 1 }
                if case .skipped = outcome.result { skipped += 1 }
            }
            return (outcomes.count, failures, skipped)
        }
        let all = count(suites.flatMap(\.outcomes))
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        text += "<testsuites name=\"calltrace check\" tests=\"\(all.tests)\" failures=\"\(all.failures)\" skipped=\"\(all.skipped)\">\n"
        for suite in suites {
            let c = count(suite.outcomes)
            text += "  <testsuite name=\"\(Self.escaped(suite.name))\" tests=\"\(c.tests)\" failures=\"\(c.failures)\" skipped=\"\(c.skipped)\">\n"
            for outcome in suite.outcomes {
                var open = "    <testcase classname=\"calltrace.check\" name=\"\(Self.escaped(outcome.name))\""
                if let measured = outcome.measured {
                    open += " time=\"\(TextFormat.fixed(measured.value, scale: 9, decimals: 6))\""
                }
                switch outcome.result {
                case .passed:
                    text += open + "/>\n"
                case .failed(let message):
                    text += open + ">\n      <failure type=\"budget\" message=\"\(Self.escaped(message))\"/>\n    </testcase>\n"
                case .skipped(let message):
                    text += open + ">\n      <skipped message=\"\(Self.escaped(message))\"/>\n    </testcase>\n"
                }
            }
            text += "  </testsuite>\n"
        }
        return text + "</testsuites>\n"
    }

    static func escaped(_ text: String) -> String { XMLText.escaped(text) }
}
