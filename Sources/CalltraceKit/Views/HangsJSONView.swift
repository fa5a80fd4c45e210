/// `hangs --format json`:
///
/// ```
/// {"hang_threshold_ms":200.0,"hangs":[{"at_ms":812.3,"quiet_ms":200.41,"thread":4242,
///  "function":"wait_for_reply","call_start_ms":611.9,"depth":2,"partial":false,
///  "stack":[{"function":"__GI___poll","module":"libc.so.6"},{"function":"wait_for_reply","module":"app"}]}]}
/// ```
public enum HangsJSONView: ProfileView {
    public static let command = ViewCommand.hangs
    public static let format = "json"
    public static let summary = "each hang with its native stack, as one JSON document"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        var json = JSONWriter(output)
        json.beginObject()
        json.member("hang_threshold_ms", milliseconds: profile.hangThreshold)
        json.key("hangs")
        json.beginArray()
        for hang in profile.hangs { write(hang, profile: profile, to: &json) }
        json.endArray()
        json.endObject()
        json.endLine()
    }

    /// One hang as a JSON object: shared with the report's JSON document.
    static func write(_ hang: ProfileHang, profile: Profile, to json: inout JSONWriter) {
        json.beginObject()
        json.member("at_ms", milliseconds: hang.at.sinceStart)
        json.member("quiet_ms", milliseconds: hang.quiet)
        json.member("thread", hang.tid)
        json.member("function", profile.functions[hang.function].name)
        json.member("call_start_ms", milliseconds: hang.callStart.sinceStart)
        json.member("depth", hang.depth)
        json.member("partial", hang.isPartial)
        json.key("stack")
        json.beginArray()
        for frame in hang.stack {
            let function = profile.functions[frame]
            json.beginObject()
            json.member("function", function.name)
            if let module = function.module { json.member("module", module) }
            json.endObject()
        }
        json.endArray()
        json.endObject()
    }
}
