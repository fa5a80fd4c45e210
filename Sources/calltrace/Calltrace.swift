import ArgumentParser

@main
struct Calltrace: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calltrace",
        abstract: "Record and show the slow function calls of a program built with -finstrument-functions.",
        version: "calltrace \(CalltraceVersion.current)",
        subcommands: [Record.self, Report.self, Timeline.self, Hitches.self, Hangs.self, Top.self, Spans.self, Diff.self,
                      Check.self, Export.self, Flame.self, Info.self, Symbolize.self, ExcludeList.self]
    )
}
