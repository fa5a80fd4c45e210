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
/// `kind` is one of process_start, runtime_start, constructor (with `cost_ms`), main, mark, end;
/// `from` says whether times count from the process's start or (when unknown) the runtime's.
public enum TimelineJSONView: ProfileView {
    public static let command = ViewCommand.timeline
    public static let format = "json"
    public static let summary = "points and phases as one JSON document"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let timeline = Timeline(profile: profile, readyMark: options.readyMark)
        var json = JSONWriter(output)
        json.beginObject()
        json.member("program", profile.program)
        json.member("pid", profile.pid)
        json.member("from", profile.processStartKnown ? "process_start" : "runtime_start")
        json.key("points")
        json.beginArray()
        var previous: Instant?
        for point in timeline.points {
            json.beginObject()
            json.member("kind", point.kind.rawValue)
            json.member("name", point.name)
            if !point.extra.isEmpty { json.member("extra", point.extra) }
            json.member("at_ms", milliseconds: point.at.sinceStart)
            if let previous { json.member("since_previous_ms", milliseconds: point.at - previous) }
            if let cost = point.cost { json.member("cost_ms", milliseconds: cost) }
            if let tid = point.tid { json.member("thread", tid) }
            json.key("calls")
            json.beginArray()
            for call in point.calls {
                json.beginObject()
                json.callMembers(profile.functions[call.function].name, start: call.start, cost: call.cost)
                json.endObject()
            }
            json.endArray()
            json.endObject()
            previous = point.at
        }
        json.endArray()
        json.key("phases")
        json.beginArray()
        for phase in timeline.phases {
            json.beginObject()
            json.member("name", phase.name)
            json.member("from", phase.from)
            json.member("to", phase.to)
            json.member("duration_ms", milliseconds: phase.duration)
            json.endObject()
        }
        json.endArray()
        json.member("constructors_ms", milliseconds: timeline.constructors)
        json.key("notes")
        json.beginArray()
        for note in timeline.notes { json.string(note) }
        json.endArray()
        json.endObject()
        json.endLine()
    }
}
