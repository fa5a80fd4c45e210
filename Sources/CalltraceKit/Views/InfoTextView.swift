/// `info`: the trace's summary (`InfoRenderer`): program, settings, timings, threads, modules and
/// the functions muted while it ran, named as the profile names them.
public enum InfoTextView: ProfileView {
    public static let command = ViewCommand.info
    public static let format = "text"
    public static let summary = "the summary, one line a field"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let info = InfoTextView.renderer(input) else { return }
        output.write(info.render())
    }

    /// The summary of the first trace, with the first profile (`InfoRenderer.profile`).
    static func renderer(_ input: ViewInput) -> InfoRenderer? {
        guard let trace = input.traces.first else { return nil }
        var info = InfoRenderer(trace: trace)
        info.profile = input.profiles.first
        return info
    }
}
