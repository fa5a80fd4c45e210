/// `check --markdown FILE`: the outcome of a check as GitHub-flavoured Markdown a bot can post as a
/// pull-request comment: a verdict line, a table of the lines that failed or could not be judged
/// (each with its message), and the warnings that are not already in the table. The same outcomes
/// as the JUnit report (`JUnitReport`); passed lines are only counted.
///
/// ```
/// **calltrace check: failed** (1 of 3 lines; 1 passed, 1 skipped)
///
/// | result | suite | line | details |
/// |---|---|---|---|
/// | **failed** | `after/ against before/` | regression: compress at most 20% slower | compress took 151.20 ms per run, baseline 100.30 ms: +50.7% (p = 0.008), over the 20% allowed |
/// | skipped | `runs/1.trace` | calls: never at most 1 ms | never has no recorded call (it did not run) |
/// ```
public struct MarkdownReport {
    private var suites: [(name: String, check: BudgetCheck)] = []

    public init() {}

    public mutating func add(trace name: String, _ check: BudgetCheck) {
        suites.append((name, check))
    }

    public var text: String {
        var failed = 0, skipped = 0, total = 0
        var rows: [String] = []
        var shown = Set<String>()
        for (name, check) in suites {
            for outcome in check.outcomes {
                total += 1
                let (result, message): (String, String)
                switch outcome.result {
                case .passed: continue
                case .failed(let text):
                    failed += 1
                    (result, message) = ("**failed**", text)
                case .skipped(let text):
                    skipped += 1
                    (result, message) = ("skipped", text)
                }
                shown.insert(message)
                let details = message.hasPrefix(name + ": ") ? String(message.dropFirst(name.count + 2)) : message
                rows.append("| \(result) | `\(Self.cell(name).replacingOccurrences(of: "`", with: "'"))` | "
                            + "\(Self.cell(outcome.name)) | \(Self.cell(details)) |")
            }
        }
        let passed = total - failed - skipped
        var text = failed > 0
            ? "**calltrace check: failed** (\(failed) of \(Self.lines(total)); \(passed) passed, \(skipped) skipped)\n"
            : "**calltrace check: passed** (\(Self.lines(total))\(skipped > 0 ? ", \(skipped) skipped" : ""))\n"
        if !rows.isEmpty {
            text += "\n| result | suite | line | details |\n|---|---|---|---|\n" + rows.joined(separator: "\n") + "\n"
        }
        let warnings = suites.flatMap(\.check.warnings).filter { !shown.contains($0) }
        if !warnings.isEmpty {
            text += "\nWarnings:\n" + warnings.map { "- " + Self.cell($0) + "\n" }.joined()
        }
        return text
    }

    private static func lines(_ count: Int) -> String { "\(count) line\(count == 1 ? "" : "s")" }

    /// Text for a table cell: a pipe would end the cell, a line break the row.
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
