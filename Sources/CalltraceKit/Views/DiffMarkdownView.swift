/// `diff --format markdown`: the comparison as a GitHub-flavoured Markdown table a bot can post as a
/// pull-request comment: a summary line, then one row per change in the text view's order
/// (regressions first), significant changes in bold. Times are per-run means in ms.
///
/// ```
/// **calltrace diff**: base 5 runs of app, new 5 runs of app; Mann-Whitney U test: a change counts at p < 0.05 and over 0.10 ms
///
/// | | function | base (ms) | new (ms) | change | p |
/// |---|---|---:|---:|---:|---:|
/// | regression | `load_assets` | 40.00 ±2% | 62.00 ±1% | **+22.00 (+55.0%)** | 0.008 |
///
/// 1 function within noise (`--all` lists it).
/// ```
public enum DiffMarkdownView: ProfileView {
    public static let command = ViewCommand.diff
    public static let format = "markdown"
    public static let summary = "a Markdown table for a pull-request comment"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        let comparison = FunctionComparison(base: input.baselineFunctionStatistics, new: input.functionStatistics,
                                            noiseShare: options.noiseShare, noiseFloor: options.noiseFloor,
                                            alpha: options.alpha)
        let tested = comparison.method != .threshold
        output.write("**calltrace diff**: base \(FunctionTable.runs(comparison.base)), new \(FunctionTable.runs(comparison.new)); "
                     + DiffTextView.rule(comparison, options) + "\n\n")
        if let few = comparison.tooFewRuns { output.write("> " + DiffTextView.tooFewRunsLine(comparison, few) + "\n\n") }
        let shown = comparison.rows.filter { $0.change != .noise || options.showUnchanged }
        let hidden = comparison.rows.count - shown.count
        if shown.isEmpty {
            output.write("No change beyond noise.\n")
        } else {
            output.write(tested ? "| | function | base (ms) | new (ms) | change | p |\n|---|---|---:|---:|---:|---:|\n"
                                : "| | function | base (ms) | new (ms) | change |\n|---|---|---:|---:|---:|\n")
            let names = FunctionNames(comparison.rows.map(\.key))
            for row in shown {
                var change = DiffTextView.signed(row.delta)
                if let permille = row.deltaPermille { change += " (\(DiffTextView.percent(permille)))" }
                change = row.change == .noise ? (tested ? "~ " : "") + change : "**\(change)**"
                var cells = [row.change == .noise ? "~" : row.change.rawValue, code(names.name(row.key)),
                             total(row.baseTotal, row.baseSpread), total(row.newTotal, row.newSpread), change]
                if tested { cells.append(row.pValue.map(DiffTextView.pValue) ?? "") }
                output.write("| " + cells.joined(separator: " | ") + " |\n")
            }
        }
        if hidden > 0 {
            output.write("\n\(hidden) function\(hidden == 1 ? "" : "s") within noise (`--all` lists "
                         + "\(hidden == 1 ? "it" : "them")).\n")
        }
    }

    private static func total(_ time: Nanoseconds, _ spread: Double?) -> String {
        TextFormat.milliseconds(time) + (spread.map { " ±" + DiffTextView.spread($0) } ?? "")
    }

    /// A name as inline code, with characters a table or a code span would take as syntax escaped.
    private static func code(_ name: String) -> String {
        let cleaned = name.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "`", with: "'")
            .replacingOccurrences(of: "\n", with: " ")
        return "`" + cleaned + "`"
    }
}
