/// `hangs --format json`:
///
/// ```
/// {"hang_threshold_ms":200.0,"hangs":[{"at_ms":812.3,"quiet_ms":200.41,"thread":4242,
///  "function":"wait_for_reply","call_start_ms":611.9,"depth":2,"partial":false,
///  "stack":[{"function":"__GI___poll","module":"libc.so.6"},{"function":"wait_for_reply","module":"app"}],
///  "spans":[{"name":"open document","extra":"path=a.txt","begin_ms":590.2,"end_ms":1630.0}]}]}
/// ```
/// Where the quiet time went, when the thread was sampled: `cpu_ms`, `preempted_ms`, `blocked_ms`
/// (`unknown_ms` when not zero) and `blocked_on`, as in `report`'s JSON.
/// `spans`: the spans the program named that were open when the hang was captured (`end_ms` null
/// for one still open when the trace ended); not in the report's JSON, which shares the rest.
public enum HangsJSONView: ProfileView {
    public static let command = ViewCommand.hangs
    public static let format = "json"
    public static let summary = "each hang with its native stack, as one JSON document"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        output.writeJSONObject {
            output.write(static: "\"hang_threshold_ms\":")
            output.writeMilliseconds(profile.hangThreshold)
            output.write(static: ",\"hangs\":")
            output.writeJSONArray(profile.hangs) { write($0, profile: profile, spans: true, to: output) }
        }
        output.write(byte: UInt8(ascii: "\n"))
    }

    /// One hang as a JSON object: shared with the report's JSON document.
    static func write(_ hang: ProfileHang, profile: Profile, spans: Bool = false, to output: ByteOutput) {
        output.writeJSONObject {
            output.write(static: "\"at_ms\":")
            output.writeMilliseconds(hang.at.sinceStart)
            output.write(static: ",\"quiet_ms\":")
            output.writeMilliseconds(hang.quiet)
            output.write(static: ",\"thread\":")
            output.writeInteger(hang.tid)
            output.write(static: ",\"function\":")
            output.writeJSONString(profile.functions[hang.function].name)
            output.write(static: ",\"call_start_ms\":")
            output.writeMilliseconds(hang.callStart.sinceStart)
            output.write(static: ",\"depth\":")
            output.writeInteger(hang.depth)
            output.write(hang.isPartial ? ",\"partial\":true" : ",\"partial\":false")
            if let split = hang.split { output.writeTimeSplitMembers(split, milliseconds: true, preemptedWritten: false) }
            output.write(static: ",\"stack\":")
            output.writeJSONArray(hang.stack) { frame in
                let function = profile.functions[frame]
                output.writeJSONObject {
                    output.write(static: "\"function\":")
                    output.writeJSONString(function.name)
                    if let module = function.module {
                        output.write(static: ",\"module\":")
                        output.writeJSONString(module)
                    }
                }
            }
            if spans { HitchesJSONView.writeSpans(profile.spans(overlapping: hang.at, hang.at), to: output) }
        }
    }
}
