/// The one list of views. A new view is one file and one line here.
public enum ViewRegistry {
    public static let all: [any ProfileView.Type] = [
        ReportTreeView.self,
        ReportJSONLView.self,
        ReportJSONView.self,
        TimelineTextView.self,
        TimelineJSONView.self,
        HitchesTextView.self,
        HitchesJSONView.self,
        HangsTextView.self,
        HangsJSONView.self,
        TopTextView.self,
        TopJSONView.self,
        SpansTextView.self,
        SpansJSONView.self,
        DiffTextView.self,
        DiffJSONView.self,
        DiffMarkdownView.self,
        ChromeExport.self,
        SpeedscopeExport.self,
        FoldedExport.self,
        PerfettoExport.self,
        OTLPExport.self,
        PprofExport.self,
        FlameGraphSVG.self,
        DiffFlameGraphSVG.self,
        InfoTextView.self,
        InfoJSONView.self,
    ]

    /// The `--format` choices of `command`, its default first (not the views a flag asks for).
    public static func formats(of command: ViewCommand) -> [String] {
        choices(of: command).map { $0.format }
    }

    /// The `--format` choice `format` of `command`.
    public static func view(_ command: ViewCommand, format: String) -> (any ProfileView.Type)? {
        choices(of: command).first { $0.format == format }
    }

    /// `--format` help for `command`: each format and what it shows.
    public static func help(of command: ViewCommand) -> String {
        choices(of: command).map { "\($0.format) (\($0.summary))" }.joined(separator: ", ")
    }

    private static func choices(of command: ViewCommand) -> [any ProfileView.Type] {
        all.filter { $0.command == command && $0.flag == nil }
    }
}
