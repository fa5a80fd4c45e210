/// `hitches --format json`:
///
/// ```
/// {"frame_interval_ms":16.666667,"frames":240,"span_ms":4100.0,"dropped_frames":14,"drop_events":3,
///  "worst_drop":9,"hitches":[{"start_ms":1250.33,"duration_ms":166.7,"dropped":9,
///  "calls":[{"function":"decode_image","start_ms":1251.0,"cost_ms":150.02,"overlap_ms":150.02,
///  "path":["main","draw_scene","decode_image"]}],
///  "spans":[{"name":"open document","extra":"path=a.txt","begin_ms":1190.2,"end_ms":1630.0}]}]}
/// ```
/// `path`: the functions of the calls the cause was made in, outermost first, ending with its own.
/// A call whose thread was sampled has `cpu_ms`, `preempted_ms`, `blocked_ms` (`unknown_ms` when
/// not zero) and `blocked_on` (`[{"what":"read pipe","time_ms":38.0}]`), as in `report`'s JSON.
/// `spans`: the spans the program named that were open during the hitch (`end_ms` null for one
/// still open when the trace ended).
public enum HitchesJSONView: ProfileView {
    public static let command = ViewCommand.hitches
    public static let format = "json"
    public static let summary = "frame drops and the worst hitches as one JSON document"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let hitches = Hitches(profile: profile, interval: options.frameInterval, limit: options.limit)
        output.writeJSONObject {
            output.write(static: "\"frame_interval_ms\":")
            output.writeMilliseconds(hitches.interval)
            output.write(static: ",\"frames\":")
            output.writeInteger(hitches.frames)
            output.write(static: ",\"span_ms\":")
            output.writeMilliseconds(hitches.span)
            output.write(static: ",\"dropped_frames\":")
            output.writeInteger(hitches.dropped)
            output.write(static: ",\"drop_events\":")
            output.writeInteger(hitches.dropEvents)
            output.write(static: ",\"worst_drop\":")
            output.writeInteger(hitches.worstDrop)
            output.write(static: ",\"hitches\":")
            output.writeJSONArray(hitches.worst) { hitch in
                output.writeJSONObject {
                    output.write(static: "\"start_ms\":")
                    output.writeMilliseconds(hitch.start.sinceStart)
                    output.write(static: ",\"duration_ms\":")
                    output.writeMilliseconds(hitch.duration)
                    output.write(static: ",\"dropped\":")
                    output.writeInteger(hitch.dropped)
                    output.write(static: ",\"calls\":")
                    output.writeJSONArray(hitch.calls) { call in
                        output.writeJSONObject {
                            output.writeJSONCallMembers(profile.functions[call.function].name, start: call.start,
                                                        cost: call.cost)
                            output.write(static: ",\"overlap_ms\":")
                            output.writeMilliseconds(call.overlap)
                            output.write(static: ",\"path\":")
                            output.writeJSONArray(call.path) { output.writeJSONString(profile.functions[$0].name) }
                            if let split = call.split {
                                output.writeTimeSplitMembers(split, milliseconds: true, preemptedWritten: false)
                            }
                        }
                    }
                    writeSpans(profile.spans(overlapping: hitch.start, hitch.start + hitch.duration), to: output)
                }
            }
        }
        output.write(byte: UInt8(ascii: "\n"))
    }

    /// `,"spans":[...]`: shared with `hangs --format json`.
    static func writeSpans(_ spans: [ProfileSpan], to output: ByteOutput) {
        output.write(static: ",\"spans\":")
        output.writeJSONArray(spans) { span in
            output.writeJSONObject {
                output.write(static: "\"name\":")
                output.writeJSONString(span.name)
                output.write(static: ",\"extra\":")
                output.writeJSONString(span.extra)
                output.write(static: ",\"begin_ms\":")
                output.writeMilliseconds(span.begin.sinceStart)
                output.write(static: ",\"end_ms\":")
                if let end = span.end { output.writeMilliseconds(end.sinceStart) } else { output.write(static: "null") }
            }
        }
    }
}
