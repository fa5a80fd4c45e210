/// `timeline --format json`: the points and phases of the text view as one JSON document.
///
/// ```
/// {"program":"/usr/bin/app","pid":4242,"from":"process_start",
///  "points":[{"kind":"mark","name":"config loaded","extra":"path=/etc/app.conf","at_ms":45.0,
///             "since_previous_ms":39.8,"thread":4242,
///             "calls":[{"function":"load_config","start_ms":5.31,"cost_ms":38.1}]}],
///  "phases":[{"name":"T2","from":"main","to":"\"first frame\"","duration_ms":95.0}],
///  "constructors_ms":0.3,"notes":[]}
/// ```
/// `kind` is one of process_start, runtime_start, constructor (with `cost_ms`), main, mark, span_begin
/// (with `duration_ms`, null for a span that never ended), span_end, end;
/// `from` says whether times count from the process's start or (when unknown) the runtime's.
public enum TimelineJSONView: ProfileView {
    public static let command = ViewCommand.timeline
    public static let format = "json"
    public static let summary = "points and phases as one JSON document"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let timeline = Timeline(profile: profile, readyMark: options.readyMark)
        output.writeJSONObject {
            output.write(static: "\"program\":")
            output.writeJSONString(profile.program)
            output.write(static: ",\"pid\":")
            output.writeInteger(profile.pid)
            output.write(static: ",\"from\":")
            output.writeJSONString(profile.processStartKnown ? "process_start" : "runtime_start")
            output.write(static: ",\"points\":")
            var previous: Instant?
            output.writeJSONArray(timeline.points) { point in
                write(point, since: previous, profile: profile, to: output)
                previous = point.at
            }
            output.write(static: ",\"phases\":")
            output.writeJSONArray(timeline.phases) { phase in
                output.writeJSONObject {
                    output.write(static: "\"name\":")
                    output.writeJSONString(phase.name)
                    output.write(static: ",\"from\":")
                    output.writeJSONString(phase.from)
                    output.write(static: ",\"to\":")
                    output.writeJSONString(phase.to)
                    output.write(static: ",\"duration_ms\":")
                    output.writeMilliseconds(phase.duration)
                }
            }
            output.write(static: ",\"constructors_ms\":")
            output.writeMilliseconds(timeline.constructors)
            output.write(static: ",\"notes\":")
            output.writeJSONArray(timeline.notes) { output.writeJSONString($0) }
        }
        output.write(byte: UInt8(ascii: "\n"))
    }

    private static func write(_ point: Timeline.Point, since previous: Instant?, profile: Profile, to output: ByteOutput) {
        output.writeJSONObject {
            output.write(static: "\"kind\":")
            output.writeJSONString(point.kind.rawValue)
            output.write(static: ",\"name\":")
            output.writeJSONString(point.name)
            if !point.extra.isEmpty {
                output.write(static: ",\"extra\":")
                output.writeJSONString(point.extra)
            }
            output.write(static: ",\"at_ms\":")
            output.writeMilliseconds(point.at.sinceStart)
            if let previous {
                output.write(static: ",\"since_previous_ms\":")
                output.writeMilliseconds(point.at - previous)
            }
            if let cost = point.cost {
                output.write(static: ",\"cost_ms\":")
                output.writeMilliseconds(cost)
            }
            if point.kind == .spanBegin {
                output.write(static: ",\"duration_ms\":")
                if let duration = point.duration { output.writeMilliseconds(duration) } else { output.write(static: "null") }
            }
            if let tid = point.tid {
                output.write(static: ",\"thread\":")
                output.writeInteger(tid)
            }
            output.write(static: ",\"calls\":")
            output.writeJSONArray(point.calls) { call in
                output.writeJSONObject {
                    output.writeJSONCallMembers(profile.functions[call.function].name, start: call.start, cost: call.cost)
                }
            }
        }
    }
}
