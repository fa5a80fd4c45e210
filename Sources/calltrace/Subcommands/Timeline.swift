import ArgumentParser
import CalltraceKit

struct Timeline: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the process's life from process creation: constructors, main, marks, exit, and the launch phases.",
        discussion: """
            Times count from the process's creation, so the time before main shows. Between two points, \
            the slowest calls that began there. T1 runs from process start to main, T2 from main to the \
            mark named by --ready (or to the end), T3 from that mark to the end.

            Example:
              calltrace timeline app.trace --ready "first frame"
            """
    )

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: FilePath

    @Option(help: ArgumentHelp("The output format: \(ViewRegistry.help(of: .timeline)).", valueName: "format"))
    var format: String = ViewRegistry.formats(of: .timeline)[0]

    @Option(help: ArgumentHelp("The mark that ends phase T2 (the program is ready), as given to calltrace_mark.",
                               valueName: "mark"))
    var ready: String?

    func validate() throws {
        try ViewSelection.check(format, command: .timeline)
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .timeline)
            let (trace, profile) = try ProfileLoading.read(file, lines: view.needsLines)
            var options = ViewOptions()
            options.readyMark = ready
            let output = ByteOutput(sink: StandardOutput.writeAll)
            view.render(ViewInput([profile]), options: options, to: output)
            output.flush()
            TraceLoading.reportWarnings(of: trace)
        }
    }
}
