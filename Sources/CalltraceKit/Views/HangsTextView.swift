/// `hangs` (default): each hang of the main thread with the call it was stuck in and its whole
/// native stack, innermost first:
///
/// ```
/// 1 hang (CALLTRACE_HANG 200.00 ms)
///
/// hang at 812.30 ms: 200.41 ms without a timed call entered or left, in wait_for_reply
/// (entered at 611.90 ms, depth 2)
///     __GI___poll (libc.so.6)
///     wait_for_reply (app)
///     main (app)
/// in spans: open document (590.20-1630.00 ms, "path=a.txt")
/// ```
/// After the heading, what the thread was blocked in over the quiet time when it was sampled and
/// blocked a quarter of it or more (`(blocked 190.00 ms: read pipe)`). The last line names the spans the program named that were open when the hang was captured,
/// when there are any (not in the report's tree, which shows the same hang).
public enum HangsTextView: ProfileView {
    public static let command = ViewCommand.hangs
    public static let format = "text"
    public static let summary = "each hang with its native stack"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        guard profile.hangThreshold > .zero || !profile.hangs.isEmpty else {
            output.write("hangs were not watched: record with CALLTRACE_HANG (such as 250ms) or calltrace record --hang\n")
            return
        }
        let count = profile.hangs.count
        output.write("\(count) hang\(count == 1 ? "" : "s") (CALLTRACE_HANG \(ms(profile.hangThreshold)))\n")
        for hang in profile.hangs {
            output.write("\n")
            for line in lines(of: hang, profile: profile) { output.write(line + "\n") }
            let spans = profile.spans(overlapping: hang.at, hang.at)
            if !spans.isEmpty { output.write("in spans: " + spans.map(HitchesTextView.label).joined(separator: ", ") + "\n") }
        }
    }

    /// A hang's heading and its stack, one frame a line: shared with the report's tree.
    static func lines(of hang: ProfileHang, profile: Profile) -> [String] {
        var lines = ["hang at \(ms(hang.at.sinceStart)): \(ms(hang.quiet)) without a timed call entered or left, in "
                     + "\(profile.functions[hang.function].name) (entered at \(ms(hang.callStart.sinceStart)), "
                     + "depth \(hang.depth))" + (hang.split?.blockedMark(cost: hang.quiet) ?? "") + (hang.isPartial ? "; partial stack (the wait was not interrupted)" : "")]
        for frame in hang.stack {
            let function = profile.functions[frame]
            lines.append("    " + function.name + (function.module.map { " (\($0))" } ?? ""))
        }
        return lines
    }

    static func ms(_ time: Nanoseconds) -> String { TextFormat.milliseconds(time) + " ms" }
}
