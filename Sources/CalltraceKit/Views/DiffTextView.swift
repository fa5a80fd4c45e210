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
public enum DiffTextView: ProfileView {
    public static let command = ViewCommand.diff
    public static let format = "text"
    public static let summary = "sections of regressions, improvements, new and gone functions"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        let comparison = FunctionComparison(base: input.baselineFunctionStatistics, new: input.functionStatistics,
                                            noiseShare: options.noiseShare, noiseFloor: options.noiseFloor)
        output.write("base: \(FunctionTable.runs(comparison.base)); new: \(FunctionTable.runs(comparison.new)); per-run means in ms; noise: "
                     + "\(TextFormat.fixed(Int64((options.noiseShare * 1000).rounded()), scale: 1, decimals: 1))% and "
                     + "\(TextFormat.milliseconds(options.noiseFloor)) ms\n")
        let shown = comparison.rows.filter { $0.change != .noise || options.showUnchanged }
        let hidden = comparison.rows.count - shown.count
        if shown.isEmpty {
            output.write("no change beyond noise\n")
        } else {
            let titles = ["base total", "new total", "change", "change %", "base calls", "new calls", "base p90", "new p90"]
            let widths = [12, 12, 11, 10, 12, 11, 11, 11]
            output.write(zip(titles, widths).map { TextFormat.padded($0, width: $1) }.joined() + "  function\n")
            let names = FunctionNames(comparison.rows.map(\.key))
            var section: FunctionComparison.Change?
            for row in shown {
                if row.change != section {
                    section = row.change
                    output.write(heading(row.change) + "\n")
                }
                let cells = [TextFormat.milliseconds(row.baseTotal), TextFormat.milliseconds(row.newTotal),
                             signed(row.delta), row.deltaPermille.map { percent($0) } ?? "",
                             calls(row.baseCalls), calls(row.newCalls),
                             TextFormat.milliseconds(row.baseP90), TextFormat.milliseconds(row.newP90)]
                output.write(zip(cells, widths).map { TextFormat.padded($0, width: $1) }.joined()
                             + "  " + names.name(row.key) + "\n")
            }
        }
        if hidden > 0 {
            output.write("(\(hidden) function\(hidden == 1 ? "" : "s") within noise; --all lists "
                         + "\(hidden == 1 ? "it" : "them"))\n")
        }
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
