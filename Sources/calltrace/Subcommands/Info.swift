import ArgumentParser
import CalltraceKit

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Summarise a trace: program, settings, timings, threads and modules.",
        discussion: """
            Also says what was lost and why (drops, a crash, a full disk), how the overhead was \
            calibrated and which functions were muted.

            Examples:
              calltrace info app.trace
              calltrace info app.trace --format json
            """
    )

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: FilePath

    @Option(help: ArgumentHelp("The output format: \(ViewRegistry.help(of: .info)).", valueName: "format"))
    var format: String = ViewRegistry.formats(of: .info)[0]

    func validate() throws {
        try ViewSelection.check(format, command: .info)
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .info)
            // The calls are only counted; the profile names the muted functions.
            let (trace, profile) = try ProfileLoading.read(file, options: TraceReader.Options(keepCalls: false),
                                                           lines: false)
            let output = ByteOutput(sink: StandardOutput.writeAll)
            view.render(ViewInput([profile], traces: [trace]), options: ViewOptions(), to: output)
            output.flush()
            TraceLoading.reportWarnings(of: trace)
        }
    }
}
