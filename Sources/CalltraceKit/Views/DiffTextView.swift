/// `diff`: functions whose total changed from BASE to NEW beyond the noise threshold, in sections:
/// regressions (largest increase first), improvements, new, gone (`FunctionComparison`). Totals and
/// calls are means per run; p90 is of the per-call costs. `--all` adds the functions within noise.
///
/// ```
/// base: 2 runs of app; new: 2 runs of app; per-run means in ms; noise: 5.0% and 0.10 ms
///   base total   new total     change  change %  base calls  new calls   base p90    new p90  function
/// regressions
///        40.00       62.00     +22.00    +55.0%           1          1      40.00      62.00  load_assets
/// new
///         0.00        3.00      +3.00                     0          2       0.00       1.50  warm_cache
/// (1 function within noise; --all lists it)
/// ```
///
/// With several runs a side the Mann-Whitney U test decides (`FunctionComparison`): each total
/// has its spread (`±`, the runs' largest deviation from the mean), each change its p-value, and a
/// change that is not significant shows `~` (with `--all`):
///
/// ```
/// base: 5 runs of app; new: 5 runs of app; per-run means in ms; Mann-Whitney U test: a change counts at p < 0.05 and over 0.10 ms
///   base total    ±   new total    ±     change  change %       p  base calls  new calls   base p90    new p90  function
/// regressions
///        40.00   2%       62.00   1%     +22.00    +55.0%   0.008           1          1      40.00      62.00  load_assets
/// ```
public enum DiffTextView: ProfileView {
    public static let command = ViewCommand.diff
    public static let format = "text"
    public static let summary = "sections of regressions, improvements, new and gone functions"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        let comparison = FunctionComparison(base: input.baselineFunctionStatistics, new: input.functionStatistics,
                                            noiseShare: options.noiseShare, noiseFloor: options.noiseFloor,
                                            alpha: options.alpha)
        let tested = comparison.method != .threshold
        output.write("base: \(FunctionTable.runs(comparison.base)); new: \(FunctionTable.runs(comparison.new)); per-run means in ms; "
                     + rule(comparison, options) + "\n")
        if let few = comparison.tooFewRuns { output.write(tooFewRunsLine(comparison, few) + "\n") }
        let shown = comparison.rows.filter { $0.change != .noise || options.showUnchanged }
        let hidden = comparison.rows.count - shown.count
        if shown.isEmpty {
            output.write("no change beyond noise\n")
        } else {
            let titles = tested
                ? ["base total", "±", "new total", "±", "change", "change %", "p", "base calls", "new calls", "base p90", "new p90"]
                : ["base total", "new total", "change", "change %", "base calls", "new calls", "base p90", "new p90"]
            let widths = tested ? [12, 5, 12, 5, 11, 10, 8, 12, 11, 11, 11] : [12, 12, 11, 10, 12, 11, 11, 11]
            output.write(zip(titles, widths).map { TextFormat.padded($0, width: $1) }.joined() + "  function\n")
            let names = FunctionNames(comparison.rows.map(\.key))
            var section: FunctionComparison.Change?
            for row in shown {
                if row.change != section {
                    section = row.change
                    output.write(heading(row.change) + "\n")
                }
                let change = tested && row.change == .noise ? "~" : row.deltaPermille.map { percent($0) } ?? ""
                var cells = [TextFormat.milliseconds(row.baseTotal), TextFormat.milliseconds(row.newTotal),
                             signed(row.delta), change,
                             calls(row.baseCalls), calls(row.newCalls),
                             TextFormat.milliseconds(row.baseP90), TextFormat.milliseconds(row.newP90)]
                if tested {
                    cells.insert(spread(row.baseSpread), at: 1)
                    cells.insert(spread(row.newSpread), at: 3)
                    cells.insert(row.pValue.map(pValue) ?? "", at: 6)
                }
                output.write(zip(cells, widths).map { TextFormat.padded($0, width: $1) }.joined()
                             + "  " + names.name(row.key) + "\n")
            }
        }
        if hidden > 0 {
            output.write("(\(hidden) function\(hidden == 1 ? "" : "s") within noise; --all lists "
                         + "\(hidden == 1 ? "it" : "them"))\n")
        }
    }

    /// What made a change count: `noise: 5.0% and 0.10 ms`, or the test's level and the floor.
    static func rule(_ comparison: FunctionComparison, _ options: ViewOptions) -> String {
        if case .mannWhitney(let alpha) = comparison.method {
            return "Mann-Whitney U test: a change counts at p < \(number(alpha)) and over "
                + "\(TextFormat.milliseconds(options.noiseFloor)) ms"
        }
        return "noise: \(TextFormat.fixed(Int64((options.noiseShare * 1000).rounded()), scale: 1, decimals: 1))% and "
            + "\(TextFormat.milliseconds(options.noiseFloor)) ms"
    }

    /// The warning when several runs a side are still too few for the test.
    static func tooFewRunsLine(_ comparison: FunctionComparison, _ few: (smallestPValue: Double, alpha: Double)) -> String {
        var needed = 2
        while MannWhitneyU.smallestPValue(needed, needed) >= few.alpha && needed < 1000 { needed += 1 }
        return "too few runs for a verdict: with \(comparison.base.runs) and \(comparison.new.runs) runs no p-value can be "
            + "under \(pValue(few.smallestPValue)) (--alpha \(number(few.alpha))), so the noise thresholds decided; "
            + "\(needed) or more runs a side let the Mann-Whitney U test decide"
    }

    /// `0.008`, `0.100`, `<0.001`.
    static func pValue(_ p: Double) -> String {
        p < 0.001 ? "<0.001" : TextFormat.fixed(Int64((p * 1000).rounded()), scale: 3, decimals: 3)
    }

    /// `3%`; empty without a spread.
    static func spread(_ share: Double?) -> String {
        share.map { "\(Int(($0 * 100).rounded()))%" } ?? ""
    }

    /// `0.05`, `0.1`.
    static func number(_ value: Double) -> String {
        var text = TextFormat.fixed(Int64((value * 10_000).rounded()), scale: 4, decimals: 4)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    private static func heading(_ change: FunctionComparison.Change) -> String {
        switch change {
        case .regression: return "regressions"
        case .improvement: return "improvements"
        case .new: return "new"
        case .gone: return "gone"
        case .noise: return "within noise"
        }
    }

    /// `+5.00`, `-1.25`.
    static func signed(_ time: Nanoseconds) -> String {
        (time.value < 0 ? "-" : "+") + TextFormat.milliseconds(Nanoseconds(Int64(clamping: time.value.magnitude)))
    }

    /// `+55.0%` from tenths of a percent.
    static func percent(_ permille: Int64) -> String {
        (permille < 0 ? "-" : "+") + TextFormat.fixed(Int64(clamping: permille.magnitude), scale: 1, decimals: 1) + "%"
    }

    /// A mean count of calls per run: `3`, `2.5`.
    static func calls(_ mean: Double) -> String {
        let tenths = Int64(mean * 10 + 0.5)
        return tenths % 10 == 0 ? String(tenths / 10) : TextFormat.fixed(tenths, scale: 1, decimals: 1)
    }
}
