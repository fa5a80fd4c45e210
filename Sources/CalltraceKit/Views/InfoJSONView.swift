/// `info --format json`: the summary as one JSON object, each row of the text a string field
/// (its label in snake case), then the threads, modules and muted functions:
///
/// ```
/// {"program":"/usr/bin/app","command_line":"app -v",...,"symbols":"not stored (...)",
///  "threads":[{"tid":4242,"name":"app","main":true,"calls":12}],
///  "modules":[{"base":"0x5555...","path":"/usr/bin/app","build_id":"ab12...","unloaded":false}],
///  "muted":[{"function":"hot_step","text":"hot_step: muted 1.20 ms after main entered, ..."}]}
/// ```
public enum InfoJSONView: ProfileView {
    public static let command = ViewCommand.info
    public static let format = "json"
    public static let summary = "the summary as JSON"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let info = InfoTextView.renderer(input) else { return }
        let trace = info.trace
        var json = JSONWriter(output)
        json.beginObject()
        for (label, text) in info.rows() {
            json.key(label.replacingOccurrences(of: " ", with: "_"))
            json.string(text)
        }
        json.key("threads")
        json.beginArray()
        for thread in trace.threads {
            json.beginObject()
            json.member("tid", thread.tid)
            json.member("name", thread.name)
            json.member("main", thread.tid == trace.header.pid)
            json.member("calls", trace.callCounts[thread.stream] ?? 0)
            json.endObject()
        }
        json.endArray()
        json.key("modules")
        json.beginArray()
        for module in trace.modules {
            json.beginObject()
            json.member("base", TextFormat.hex(module.base))
            json.member("path", module.path)
            json.key("build_id")
            if module.buildID.isEmpty { json.null() } else { json.string(module.buildIDHex) }
            json.member("unloaded", module.goneTick != nil)
            json.endObject()
        }
        json.endArray()
        json.key("muted")
        json.beginArray()
        for index in trace.muted.indices {
            json.beginObject()
            json.member("function", info.mutedName(index))
            let line = info.mutedLine(index)
            json.member("text", String(line.dropFirst(2).dropLast()))  // without the indent and newline
            json.endObject()
        }
        json.endArray()
        json.endObject()
        json.endLine()
    }
}
