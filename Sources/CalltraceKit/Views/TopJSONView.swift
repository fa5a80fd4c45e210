/// `top --format json`: the same rows as the text view as one JSON document, every row unless
/// `--limit` is given (`omitted` counts the rows left out):
///
/// ```
/// {"runs":3,"programs":["app"],"calls":12,"sort":"total","functions":[
///  {"function":"load_assets","module":"app","calls":6,"total_ms":360,"self_ms":150,"mean_ms":60,
///   "p50_ms":60,"p90_ms":70,"p95_ms":70,"p99_ms":70,"max_ms":70,
///   "runs":3,"run_total_p50_ms":120,"run_total_p90_ms":130,"run_total_max_ms":130}],"omitted":0}
/// ```
///
/// Times are milliseconds (to the nanosecond); `module` is left out when no module holds the function.
public enum TopJSONView: ProfileView {
    public static let command = ViewCommand.top
    public static let format = "json"
    public static let summary = "the same table as one JSON document"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        let statistics = input.functionStatistics
        let rows = statistics.rows(by: options.sort)
        let shown = options.limit > 0 ? Array(rows.prefix(options.limit)) : rows
        output.write("{")
        output.writeJSONKey("runs")
        output.writeInteger(statistics.runs)
        output.write(",")
        output.writeJSONKey("programs")
        output.write("[")
        for (position, program) in statistics.programs.enumerated() {
            if position > 0 { output.write(",") }
            output.writeJSONString(program)
        }
        output.write("],")
        output.writeJSONKey("calls")
        output.writeInteger(statistics.callCount)
        output.write(",")
        output.writeJSONKey("sort")
        output.writeJSONString(options.sort.rawValue)
        output.write(",")
        output.writeJSONKey("functions")
        output.write("[")
        for (position, row) in shown.enumerated() {
            if position > 0 { output.write(",") }
            output.write("{")
            output.writeJSONKey("function")
            output.writeJSONString(row.key.name)
            if !row.key.module.isEmpty {
                output.write(",")
                output.writeJSONKey("module")
                output.writeJSONString(row.key.module)
            }
            output.write(",")
            output.writeJSONKey("calls")
            output.writeInteger(row.calls)
            let times: [(StaticString, Nanoseconds)] = [
                ("total_ms", row.total), ("self_ms", row.selfTime), ("mean_ms", row.mean),
                ("p50_ms", row.percentile(50)), ("p90_ms", row.percentile(90)), ("p95_ms", row.percentile(95)),
                ("p99_ms", row.percentile(99)), ("max_ms", row.max),
            ]
            for (key, time) in times {
                output.write(",")
                output.writeJSONKey(key)
                output.writeMilliseconds(time)
            }
            output.write(",")
            output.writeJSONKey("runs")
            output.writeInteger(row.runs)
            let runTimes: [(StaticString, Nanoseconds)] = [
                ("run_total_p50_ms", row.runPercentile(50)), ("run_total_p90_ms", row.runPercentile(90)),
                ("run_total_max_ms", row.runPercentile(100)),
            ]
            for (key, time) in runTimes {
                output.write(",")
                output.writeJSONKey(key)
                output.writeMilliseconds(time)
            }
            output.write("}")
        }
        output.write("],")
        output.writeJSONKey("omitted")
        output.writeInteger(rows.count - shown.count)
        output.write("}\n")
    }
}
