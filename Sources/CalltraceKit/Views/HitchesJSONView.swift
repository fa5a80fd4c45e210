/// `hitches --format json`:
///
/// ```
/// {"frame_interval_ms":16.666667,"frames":240,"span_ms":4100.0,"dropped_frames":14,"drop_events":3,
///  "worst_drop":9,"hitches":[{"start_ms":1250.33,"duration_ms":166.7,"dropped":9,
///  "calls":[{"function":"decode_image","start_ms":1251.0,"cost_ms":150.02,"overlap_ms":150.02}]}]}
/// ```
public enum HitchesJSONView: ProfileView {
    public static let command = ViewCommand.hitches
    public static let format = "json"
    public static let summary = "frame drops and the worst hitches as one JSON document"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let hitches = Hitches(profile: profile, interval: options.frameInterval, limit: options.limit)
        var json = JSONWriter(output)
        json.beginObject()
        json.member("frame_interval_ms", milliseconds: hitches.interval)
        json.member("frames", hitches.frames)
        json.member("span_ms", milliseconds: hitches.span)
        json.member("dropped_frames", hitches.dropped)
        json.member("drop_events", hitches.dropEvents)
        json.member("worst_drop", hitches.worstDrop)
        json.key("hitches")
        json.beginArray()
        for hitch in hitches.worst {
            json.beginObject()
            json.member("start_ms", milliseconds: hitch.start.sinceStart)
            json.member("duration_ms", milliseconds: hitch.duration)
            json.member("dropped", hitch.dropped)
            json.key("calls")
            json.beginArray()
            for call in hitch.calls {
                json.beginObject()
                json.callMembers(profile.functions[call.function].name, start: call.start, cost: call.cost)
                json.member("overlap_ms", milliseconds: call.overlap)
                json.endObject()
            }
            json.endArray()
            json.endObject()
        }
        json.endArray()
        json.endObject()
        json.endLine()
    }
}
