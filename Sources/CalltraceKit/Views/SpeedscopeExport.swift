/// `export --format speedscope`: speedscope's file format
/// (https://www.speedscope.app/file-format-schema.json): the functions as shared frames, and one
/// evented profile per thread with calls, open (`O`) at their start and closed (`C`) at their
/// end in nanoseconds since the process started, placed at their measured wall time
/// (`CallTimeline`).
///
/// ```
/// {"$schema":"https://www.speedscope.app/file-format-schema.json","exporter":"calltrace",
///  "name":"app","activeProfileIndex":0,"shared":{"frames":[{"name":"main","file":"app.c","line":40}]},
///  "profiles":[{"type":"evented","name":"thread 4242 (main)","unit":"nanoseconds","startValue":5310000,
///   "endValue":126710000,"events":[{"type":"O","frame":0,"at":5310000},{"type":"C","frame":0,"at":126710000}]}]}
/// ```
public enum SpeedscopeExport: ProfileView {
    public static let command = ViewCommand.export
    public static let format = "speedscope"
    public static let summary = "speedscope's JSON file format, one evented profile per thread"
    public static let needsLines = true

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        var json = JSONWriter(output)
        json.beginObject()
        json.member("$schema", static: "https://www.speedscope.app/file-format-schema.json")
        json.member("exporter", static: "calltrace")
        json.member("name", profile.programName)
        json.member("activeProfileIndex", 0)
        json.key("shared")
        json.beginObject()
        json.key("frames")
        json.beginArray()
        for function in profile.functions {
            json.beginObject()
            json.member("name", function.name)
            if let file = function.file { json.member("file", file) }
            if let line = function.line { json.member("line", line) }
            json.endObject()
        }
        json.endArray()
        json.endObject()
        json.key("profiles")
        json.beginArray()
        for thread in profile.threads where thread.count > 0 {
            // The span first (speedscope wants it before the events): the roots' extent.
            var startValue = Int64.max
            var endValue = Int64.min
            CallTimeline.walk(thread, measured: profile.measured, open: { _, start, end in
                startValue = min(startValue, start)
                endValue = max(endValue, end)
            }, close: { _, _ in })
            json.beginObject()
            json.member("type", static: "evented")
            let name = "thread \(thread.tid)" + (thread.name.isEmpty ? "" : " \(thread.name)") + (thread.isMain ? " (main)" : "")
            json.member("name", name)
            json.member("unit", static: "nanoseconds")
            json.member("startValue", max(startValue, 0))
            json.member("endValue", max(endValue, 0))
            json.key("events")
            json.beginArray()
            func event(_ type: StaticString, _ call: Int, _ at: Int64) {
                json.beginObject()
                json.member("type", static: type)
                json.member("frame", thread.function[call])
                json.member("at", max(at, 0))
                json.endObject()
            }
            CallTimeline.walk(thread, measured: profile.measured, open: { call, start, _ in event("O", call, start) },
                              close: { call, end in event("C", call, end) })
            json.endArray()
            json.endObject()
        }
        json.endArray()
        json.endObject()
        json.endLine()
    }
}
