/// `timeline` (default): the process's life from process creation, one point a line with its time
/// since process start and since the previous point, under each point the slowest calls that began
/// between it and the next (start, cost, name), then the launch phases:
///
/// ```
/// timeline of app (pid 4242): times since process start
///      0.00 ms               process start
///      4.78 ms     +4.78 ms  runtime start
///      4.90 ms     +0.12 ms  constructor init_tables (0.30 ms)
///      5.20 ms     +0.30 ms  main entered
///                              5.31 ms    38.10 ms  load_config
///     45.00 ms    +39.80 ms  mark "config loaded" path=/etc/app.conf
///     45.05 ms     +0.05 ms  span "build ui" begins (72.10 ms)
///                             45.10 ms    70.02 ms  build_ui
///    117.15 ms    +72.10 ms  span "build ui" ends
///    121.40 ms     +4.25 ms  exit
///
/// T1 process start -> main            5.20 ms (constructors 0.30 ms)
/// T2 main -> "first frame"           95.00 ms
/// T3 "first frame" -> end            21.20 ms
/// ```
public enum TimelineTextView: ProfileView {
    public static let command = ViewCommand.timeline
    public static let format = "text"
    public static let summary = "points and phases, one a line"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let timeline = Timeline(profile: profile, readyMark: options.readyMark)
        let origin = profile.processStartKnown ? "process start" : "runtime start (the process's start is unknown)"
        output.write("timeline of \(profile.programName) (pid \(profile.pid)): times since \(origin)\n")
        var previous: Instant?
        for point in timeline.points {
            output.write(padded(milliseconds(point.at.sinceStart), 10))
            let step = previous.map { "+" + milliseconds(point.at - $0) } ?? ""
            output.write(padded(step, 13) + "  ")
            switch point.kind {
            case .constructor:
                output.write("constructor \(point.name) (\(milliseconds(point.cost ?? .zero)))")
            case .mark:
                output.write("mark \"\(point.name)\"" + (point.extra.isEmpty ? "" : " " + point.extra))
                if let tid = point.tid, tid != profile.pid { output.write(" (thread \(tid))") }
            case .spanBegin:
                output.write("span \"\(point.name)\" begins" + (point.extra.isEmpty ? "" : " " + point.extra)
                             + (point.duration.map { " (\(milliseconds($0)))" } ?? " (unfinished)"))
                if let tid = point.tid, tid != profile.pid { output.write(" (thread \(tid))") }
            case .spanEnd:
                output.write("span \"\(point.name)\" ends")
                if let tid = point.tid, tid != profile.pid { output.write(" (thread \(tid))") }
            default:
                output.write(point.name)
            }
            output.write(byte: 0x0A)
            for call in point.calls {
                output.write(String(repeating: " ", count: 27) + padded(milliseconds(call.start.sinceStart), 10) + "  "
                             + padded(milliseconds(call.cost), 10) + "  " + profile.functions[call.function].name + "\n")
            }
            previous = point.at
        }
        if !timeline.phases.isEmpty { output.write(byte: 0x0A) }
        for phase in timeline.phases {
            let span = "\(phase.name) \(phase.from) -> \(phase.to)"
            var line = span.padding(toLength: max(span.count, 34), withPad: " ", startingAt: 0)
                + padded(milliseconds(phase.duration), 11)
            if phase.name == "T1" && timeline.constructors > .zero {
                line += " (constructors \(milliseconds(timeline.constructors)))"
            }
            output.write(line + "\n")
        }
        for note in timeline.notes { output.write("note: \(note)\n") }
    }

    private static func milliseconds(_ time: Nanoseconds) -> String { TextFormat.milliseconds(time) + " ms" }

    private static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
