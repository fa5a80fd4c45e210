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
        output.writeJSONObject {
            for (index, (label, text)) in info.rows().enumerated() {
                if index > 0 { output.write(static: ",") }
                output.writeJSONString(label.replacingOccurrences(of: " ", with: "_"))
                output.write(static: ":")
                output.writeJSONString(text)
            }
            output.write(static: ",\"threads\":")
            output.writeJSONArray(trace.threads) { thread in
                output.writeJSONObject {
                    output.write(static: "\"tid\":")
                    output.writeInteger(thread.tid)
                    output.write(static: ",\"name\":")
                    output.writeJSONString(thread.name)
                    output.write(static: thread.tid == trace.header.pid ? ",\"main\":true,\"calls\":" : ",\"main\":false,\"calls\":")
                    output.writeInteger(trace.callCounts[thread.stream] ?? 0)
                }
            }
            output.write(static: ",\"modules\":")
            output.writeJSONArray(trace.modules) { module in
                output.writeJSONObject {
                    output.write(static: "\"base\":")
                    output.writeJSONString(TextFormat.hex(module.base))
                    output.write(static: ",\"path\":")
                    output.writeJSONString(module.path)
                    output.write(static: ",\"build_id\":")
                    if module.buildID.isEmpty { output.write(static: "null") } else { output.writeJSONString(module.buildIDHex) }
                    output.write(static: module.goneTick == nil ? ",\"unloaded\":false" : ",\"unloaded\":true")
                }
            }
            output.write(static: ",\"muted\":")
            output.writeJSONArray(trace.muted.indices) { index in
                output.writeJSONObject {
                    output.write(static: "\"function\":")
                    output.writeJSONString(info.mutedName(index))
                    output.write(static: ",\"text\":")
                    let line = info.mutedLine(index)
                    output.writeJSONString(String(line.dropFirst(2).dropLast()))  // without the indent and newline
                }
            }
        }
        output.write(byte: UInt8(ascii: "\n"))
    }
}
