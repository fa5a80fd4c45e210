/// `diff --format json`: the comparison as one JSON document, rows in the text view's order, each
/// with its `status` (`regression`, `improvement`, `new`, `gone`, and with `--all` `noise`):
///
/// ```
/// {"base":{"runs":2,"programs":["app"]},"new":{"runs":2,"programs":["app"]},
///  "noise_share":0.05,"noise_floor_ms":0.100000,"functions":[
///  {"function":"load_assets","module":"app","status":"regression","base_total_ms":40.000000,
///   "new_total_ms":62.000000,"change_ms":22.000000,"change_percent":55.0,"base_calls":1,"new_calls":1,
///   "base_p90_ms":40.000000,"new_p90_ms":62.000000}],"hidden":1}
/// ```
///
/// Totals and calls are means per run; `change_ms` is signed; `change_percent` is left out when the
/// baseline's total is zero; `hidden` counts the rows within noise left out. `method` is
/// `threshold` or `mann-whitney` (several runs a side, `FunctionComparison`); with the test,
/// `alpha`, and per function `p_value` and the runs' spreads (`base_spread_percent`,
/// `new_spread_percent`: the largest deviation from the mean total, in percent of it); with
/// several runs a side still too few for a verdict, `too_few_runs` gives the smallest p-value
/// possible.
public enum DiffJSONView: ProfileView {
    public static let command = ViewCommand.diff
    public static let format = "json"
    public static let summary = "the same comparison as one JSON document"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        let comparison = FunctionComparison(base: input.baselineFunctionStatistics, new: input.functionStatistics,
                                            noiseShare: options.noiseShare, noiseFloor: options.noiseFloor,
                                            alpha: options.alpha)
        let shown = comparison.rows.filter { $0.change != .noise || options.showUnchanged }
        var nesting = JSONNesting()
        nesting.open(.object, in: output)
        output.writeJSONKey("base")
        nesting.open(.object, in: output)
        output.writeJSONRuns(comparison.base)
        nesting.close(in: output)
        output.write(",")
        output.writeJSONKey("new")
        nesting.open(.object, in: output)
        output.writeJSONRuns(comparison.new)
        nesting.close(in: output)
        output.write(",")
        output.writeJSONKey("noise_share")
        output.write(number(options.noiseShare))
        output.write(",")
        output.writeJSONKey("noise_floor_ms")
        output.writeMilliseconds(options.noiseFloor)
        output.write(",")
        output.writeJSONKey("method")
        if case .mannWhitney(let alpha) = comparison.method {
            output.writeJSONString("mann-whitney")
            output.write(",")
            output.writeJSONKey("alpha")
            output.write(number(alpha))
        } else {
            output.writeJSONString("threshold")
        }
        if let few = comparison.tooFewRuns {
            output.write(",")
            output.writeJSONKey("too_few_runs")
            nesting.open(.object, in: output)
            output.writeJSONKey("smallest_p_value")
            output.write(number(few.smallestPValue))
            output.write(",")
            output.writeJSONKey("alpha")
            output.write(number(few.alpha))
            nesting.close(in: output)
        }
        output.write(",")
        output.writeJSONKey("functions")
        nesting.open(.array, in: output)
        for (position, row) in shown.enumerated() {
            if position > 0 { output.write(",") }
            nesting.open(.object, in: output)
            output.writeJSONFunction(row.key)
            output.write(",")
            output.writeJSONKey("status")
            output.writeJSONString(row.change.rawValue)
            output.writeJSONMilliseconds([("base_total_ms", row.baseTotal), ("new_total_ms", row.newTotal)])
            output.write(",")
            output.writeJSONKey("change_ms")
            if row.delta.value < 0 { output.write("-") }
            output.writeMilliseconds(Nanoseconds(Int64(clamping: row.delta.value.magnitude)))
            if let permille = row.deltaPermille {
                output.write(",")
                output.writeJSONKey("change_percent")
                output.write((permille < 0 ? "-" : "")
                             + TextFormat.fixed(Int64(clamping: permille.magnitude), scale: 1, decimals: 1))
            }
            output.write(",")
            output.writeJSONKey("base_calls")
            output.write(number(row.baseCalls))
            output.write(",")
            output.writeJSONKey("new_calls")
            output.write(number(row.newCalls))
            output.writeJSONMilliseconds([("base_p90_ms", row.baseP90), ("new_p90_ms", row.newP90)])
            let extras: [(StaticString, Double?)] = [("p_value", row.pValue),
                                                     ("base_spread_percent", row.baseSpread.map { $0 * 100 }),
                                                     ("new_spread_percent", row.newSpread.map { $0 * 100 })]
            for (key, value) in extras {
                guard let value else { continue }
                output.write(",")
                output.writeJSONKey(key)
                output.write(number(value))
            }
            nesting.close(in: output)
        }
        nesting.close(in: output)
        output.write(",")
        output.writeJSONKey("hidden")
        output.writeInteger(comparison.rows.count - shown.count)
        nesting.close(downTo: 0, in: output)
        output.write(byte: UInt8(ascii: "\n"))
    }

    /// A finite number as JSON (whole numbers without a fraction).
    private static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
