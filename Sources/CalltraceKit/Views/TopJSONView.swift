/// `top --format json`: the same rows as the text view as one JSON document, every row unless
/// `--limit` is given (`omitted` counts the rows left out):
///
/// ```
/// {"runs":3,"programs":["app"],"calls":33,"sort":"total","functions":[
///  {"function":"load_assets","module":"app","calls":9,"total_ms":360.920000,"self_ms":0.110000,
///   "mean_ms":40.100000,"p50_ms":40.120000,"p90_ms":50.140000,"p95_ms":50.140000,"p99_ms":50.140000,
///   "max_ms":50.140000,"runs":3,"run_total_p50_ms":120.310000,"run_total_p90_ms":120.330000,
///   "run_total_max_ms":120.330000}],"omitted":4}
/// ```
///
/// Times are milliseconds (to the nanosecond); `module` is left out when no module holds the function.
/// When the trace's threads were sampled, `cpu_ms` follows `total_ms` (null when unknown: `top`'s `-`).
public enum TopJSONView: ProfileView {
    public static let command = ViewCommand.top
    public static let format = "json"
    public static let summary = "the same table as one JSON document"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        let statistics = input.functionStatistics
        let rows = statistics.rows(by: options.sort)
        let shown = options.limit > 0 ? Array(rows.prefix(options.limit)) : rows
        var nesting = JSONNesting()
        nesting.open(.object, in: output)
        output.writeJSONRuns(statistics)
        output.write(",")
        output.writeJSONKey("calls")
        output.writeInteger(statistics.callCount)
        output.write(",")
        output.writeJSONKey("sort")
        output.writeJSONString(options.sort.rawValue)
        output.write(",")
        output.writeJSONKey("functions")
        nesting.open(.array, in: output)
        for (position, row) in shown.enumerated() {
            if position > 0 { output.write(",") }
            nesting.open(.object, in: output)
            output.writeJSONFunction(row.key)
            output.write(",")
            output.writeJSONKey("calls")
            output.writeInteger(row.calls)
            output.writeJSONMilliseconds([("total_ms", row.total)])
            if statistics.hasCPU {
                output.write(",")
                output.writeJSONKey("cpu_ms")
                if let cpu = row.cpu { output.writeMilliseconds(cpu) } else { output.write("null") }
            }
            output.writeJSONMilliseconds([
                ("self_ms", row.selfTime), ("mean_ms", row.mean),
                ("p50_ms", row.percentile(50)), ("p90_ms", row.percentile(90)), ("p95_ms", row.percentile(95)),
                ("p99_ms", row.percentile(99)), ("max_ms", row.max),
            ])
            output.write(",")
            output.writeJSONKey("runs")
            output.writeInteger(row.runs)
            output.writeJSONMilliseconds([
                ("run_total_p50_ms", row.runPercentile(50)), ("run_total_p90_ms", row.runPercentile(90)),
                ("run_total_max_ms", row.runPercentile(100)),
            ])
            nesting.close(in: output)
        }
        nesting.close(in: output)
        output.write(",")
        output.writeJSONKey("omitted")
        output.writeInteger(rows.count - shown.count)
        nesting.close(downTo: 0, in: output)
        output.write(byte: UInt8(ascii: "\n"))
    }
}
