/// `top`: one row per function over every thread and run given, by total (or `--sort`), at most
/// `--limit` rows. Times are milliseconds; per-call costs are by nearest rank (`FunctionStatistics`).
/// Given several runs it adds the distribution of the function's total per run (over the runs it
/// appeared in):
///
/// ```
/// 3 runs of app: 33 calls of 5 functions, by total; times in ms
///    calls      total       self       mean        p50        p90        p95        p99        max  runs    run p50    run p90    run max  function
///        3     422.16       0.13     140.72     140.59     141.04     141.04     141.04     141.04     3     140.59     141.04     141.04  main
///        9     360.92       0.11      40.10      40.12      50.14      50.14      50.14      50.14     3     120.31     120.33     120.33  load_assets
/// ```
///
/// When the trace's threads were sampled (`ThreadTime`), a `cpu` column follows `total`: the time
/// on a CPU of the calls counted in it (`FunctionStatistics.Row.cpu`), `-` for a function none of
/// whose calls is known (each under a millisecond); `--sort cpu` orders by it.
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
        output.write(FunctionTable.runs(statistics) + ": \(statistics.callCount) call\(statistics.callCount == 1 ? "" : "s") of "
                     + "\(rows.count) function\(rows.count == 1 ? "" : "s"), by \(options.sort.rawValue); times in ms\n")
        guard !rows.isEmpty else { return }
        let cpu = statistics.hasCPU
        var heading = TextFormat.padded("calls", width: 8)
        for title in ["total"] + (cpu ? ["cpu"] : []) + ["self", "mean", "p50", "p90", "p95", "p99", "max"] {
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
            line += TextFormat.padded(TextFormat.milliseconds(row.total), width: 11)
            if cpu { line += TextFormat.padded(row.cpu.map { TextFormat.milliseconds($0) } ?? "-", width: 11) }
            for time in [row.selfTime, row.mean, row.percentile(50), row.percentile(90),
                         row.percentile(95), row.percentile(99), row.max] {
                line += TextFormat.padded(TextFormat.milliseconds(time), width: 11)
            }
            if manyRuns {
                line += TextFormat.padded(String(row.runs), width: 6)
                for time in [row.runPercentile(50), row.runPercentile(90), row.runPercentile(100)] {
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
