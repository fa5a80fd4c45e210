/// `top`: one row per function over every thread and run given, by total (or `--sort`), at most
/// `--limit` rows. Times are milliseconds; per-call costs are by nearest rank (`FunctionStatistics`).
/// Given several runs it adds the distribution of the function's total per run (over the runs it
/// appeared in):
///
/// ```
/// 3 runs of app: 12 calls of 3 functions, by total; times in ms
///    calls      total       self       mean        p50        p90        p95        p99        max  runs    run p50    run p90    run max  function
///        6     360.00     150.00      60.00      60.00      70.00      70.00      70.00      70.00     3     120.00     130.00     130.00  load_assets
/// ```
///
/// A function name found in two modules gets its module in brackets: `init [libfoo.so]`.
public enum TopTextView: ProfileView {
    public static let command = ViewCommand.top
    public static let format = "text"
    public static let summary = "a table of functions with call counts, totals and percentiles"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        let statistics = input.functionStatistics
        let rows = statistics.rows(by: options.sort)
        let shown = options.limit > 0 ? Array(rows.prefix(options.limit)) : rows
        let manyRuns = statistics.runs > 1
        output.write("\(statistics.runs) run\(statistics.runs == 1 ? "" : "s") of "
                     + (statistics.programs.isEmpty ? "nothing" : statistics.programs.joined(separator: ", "))
                     + ": \(statistics.callCount) call\(statistics.callCount == 1 ? "" : "s") of "
                     + "\(rows.count) function\(rows.count == 1 ? "" : "s"), by \(options.sort.rawValue); times in ms\n")
        guard !rows.isEmpty else { return }
        var heading = TextFormat.padded("calls", width: 8)
        for title in ["total", "self", "mean", "p50", "p90", "p95", "p99", "max"] {
            heading += TextFormat.padded(title, width: 11)
        }
        if manyRuns {
            heading += TextFormat.padded("runs", width: 6)
            for title in ["run p50", "run p90", "run max"] { heading += TextFormat.padded(title, width: 11) }
        }
        output.write(heading + "  function\n")
        let names = FunctionNames(rows.map(\.key))
        for row in shown {
            var line = TextFormat.padded(String(row.calls), width: 8)
            for time in [row.total, row.selfTime, row.mean, row.percentile(50), row.percentile(90),
                         row.percentile(95), row.percentile(99), row.max] {
                line += TextFormat.padded(TextFormat.milliseconds(time), width: 11)
            }
            if manyRuns {
                line += TextFormat.padded(String(row.runs), width: 6)
                for time in [row.runPercentile(50), row.runPercentile(90), Nanoseconds(row.runTotals.last ?? 0)] {
                    line += TextFormat.padded(TextFormat.milliseconds(time), width: 11)
                }
            }
            output.write(line + "  " + names.name(row.key) + "\n")
        }
        if shown.count < rows.count {
            let more = rows.count - shown.count
            output.write("(\(more) more function\(more == 1 ? "" : "s"); --limit 0 lists all)\n")
        }
    }
}

/// Function names for a table: the bare name, with the module in brackets when another function of
/// the table has the same name in another module.
struct FunctionNames {
    private var ambiguous: Set<String> = []

    init(_ keys: [FunctionKey]) {
        var modules: [String: String] = [:]
        for key in keys {
            if let module = modules[key.name], module != key.module { ambiguous.insert(key.name) }
            modules[key.name] = key.module
        }
    }

    func name(_ key: FunctionKey) -> String {
        ambiguous.contains(key.name) && !key.module.isEmpty ? "\(key.name) [\(key.module)]" : key.name
    }
}
