/// `hitches` (default): frame counts and drops, then the worst hitches, each with the calls that
/// caused it:
///
/// ```
/// frames: 240 in 4.10 s, target interval 16.67 ms (CALLTRACE_FRAME)
/// dropped: 14 frames in 3 drop events, at most 9 at once
///
/// worst hitches:
///   at 1250.33 ms  166.70 ms  9 dropped
///       150.02 ms of 150.02 ms  main > draw_scene > decode_image
///   at 2210.80 ms   50.10 ms  2 dropped
///        33.50 ms of  40.00 ms  main > draw_scene > layout_text
///       in spans: open document (1190.20-1630.00 ms, "path=a.txt")
/// ```
/// Each call line: how long it ran inside the hitch, of its whole cost, and its path (the calls it
/// was made in, outermost first, then its own name; past `pathNames` names, the outermost, `...`
/// and the innermost ones), then what it was blocked in as `report`'s tree says it
/// (`(blocked 38.00 ms: read /etc/app.conf)`, for a call blocked a quarter of its cost or more). Then the spans the program named that were open during the hitch
/// (`Profile.spans(overlapping:)`), with their times and extra text, when there are any.
public enum HitchesTextView: ProfileView {
    public static let command = ViewCommand.hitches
    public static let format = "text"
    public static let summary = "frame drops and the calls behind the worst"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let hitches = Hitches(profile: profile, interval: options.frameInterval, limit: options.limit)
        let source = options.frameInterval == nil ? "CALLTRACE_FRAME" : "--frame"
        if hitches.frames == 0 {
            output.write("no frames: the program never called calltrace_frame() (see calltrace.h)\n")
            return
        }
        output.write("frames: \(hitches.frames) in \(ms(hitches.span)), target interval \(ms(hitches.interval)) (\(source))\n")
        output.write("dropped: \(hitches.dropped) frame\(hitches.dropped == 1 ? "" : "s") in \(hitches.dropEvents) drop "
                     + "event\(hitches.dropEvents == 1 ? "" : "s"), at most \(hitches.worstDrop) at once\n")
        guard !hitches.worst.isEmpty else { return }
        output.write("\nworst hitches:\n")
        for hitch in hitches.worst {
            output.write("  at \(pad(ms(hitch.start.sinceStart), 11))  \(pad(ms(hitch.duration), 10))  \(hitch.dropped) dropped\n")
            for call in hitch.calls {
                output.write("      \(pad(ms(call.overlap), 10)) of \(pad(ms(call.cost), 10))  \(path(call.path, profile))"
                             + (call.split?.blockedMark(cost: call.cost) ?? "") + "\n")
            }
            let spans = profile.spans(overlapping: hitch.start, hitch.start + hitch.duration)
            if !spans.isEmpty { output.write("      in spans: " + spans.map(label).joined(separator: ", ") + "\n") }
        }
    }

    /// `open document (5.00-45.00 ms, "path=a.txt")`, `request (70.00 ms-, unfinished)`.
    static func label(_ span: ProfileSpan) -> String {
        let begin = TextFormat.milliseconds(span.begin.sinceStart)
        let times = span.end.map { "\(begin)-\(TextFormat.milliseconds($0.sinceStart)) ms" } ?? "\(begin) ms-, unfinished"
        return "\(span.name) (\(times)\(span.extra.isEmpty ? "" : ", \"\(span.extra)\""))"
    }

    /// Names shown of a longer path: the outermost one and the `pathNames - 1` innermost.
    static let pathNames = 6

    private static func path(_ functions: [Int], _ profile: Profile) -> String {
        let names = functions.map { profile.functions[$0].name }
        guard names.count > pathNames else { return names.joined(separator: " > ") }
        return ([names[0], "..."] + names.suffix(pathNames - 1)).joined(separator: " > ")
    }

    private static func ms(_ time: Nanoseconds) -> String { TextFormat.milliseconds(time) + " ms" }
    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
