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
        output.writeJSONObject {
            output.write(static: "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"calltrace\",\"name\":")
            output.writeJSONString(profile.programName)
            output.write(static: ",\"activeProfileIndex\":0,\"shared\":")
            output.writeJSONObject {
                output.write(static: "\"frames\":")
                output.writeJSONArray(profile.functions) { function in
                    output.writeJSONObject {
                        output.write(static: "\"name\":")
                        output.writeJSONString(function.name)
                        if let file = function.file {
                            output.write(static: ",\"file\":")
                            output.writeJSONString(file)
                        }
                        if let line = function.line {
                            output.write(static: ",\"line\":")
                            output.writeInteger(line)
                        }
                    }
                }
            }
            output.write(static: ",\"profiles\":")
            output.writeJSONArray(profile.threads.filter { $0.count > 0 }) { write($0, profile: profile, to: output) }
        }
        output.write(byte: UInt8(ascii: "\n"))
    }

    /// One thread's evented profile: its calls as open (O) and close (C) events in time order.
    private static func write(_ thread: ProfileThread, profile: Profile, to output: ByteOutput) {
        // The span first (speedscope wants it before the events): the roots' extent.
        var startValue = Int64.max
        var endValue = Int64.min
        CallTimeline.walk(thread, measured: profile.measured, open: { _, start, end in
            startValue = min(startValue, start)
            endValue = max(endValue, end)
        }, close: { _, _ in })
        output.writeJSONObject {
            output.write(static: "\"type\":\"evented\",\"name\":")
            let name = "thread \(thread.tid)" + (thread.name.isEmpty ? "" : " \(thread.name)") + (thread.isMain ? " (main)" : "")
            output.writeJSONString(name)
            output.write(static: ",\"unit\":\"nanoseconds\",\"startValue\":")
            output.writeInteger(max(startValue, 0))
            output.write(static: ",\"endValue\":")
            output.writeInteger(max(endValue, 0))
            output.write(static: ",\"events\":[")
            // Millions of events: each one flat object written whole, the array's comma by hand.
            var first = true
            func event(_ type: StaticString, _ call: Int, _ at: Int64) {
                output.write(static: first ? "{\"type\":\"" : ",{\"type\":\"")
                first = false
                output.write(static: type)
                output.write(static: "\",\"frame\":")
                output.write(UInt64(thread.function[call]), width: 0)
                output.write(static: ",\"at\":")
                output.writeInteger(max(at, 0))
                output.write(byte: UInt8(ascii: "}"))
            }
            CallTimeline.walk(thread, measured: profile.measured, open: { call, start, _ in event("O", call, start) },
                              close: { call, end in event("C", call, end) })
            output.write(byte: UInt8(ascii: "]"))
        }
    }
}
