import ArgumentParser
import CalltraceKit

struct Hangs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the main thread's hangs, each with the call it was stuck in and its whole native stack.",
        discussion: """
            Hangs are recorded when the program runs with CALLTRACE_HANG (or calltrace record --hang): once \
            the main thread has been inside a call that long without entering or leaving a timed call, its \
            native stack is captured, libc and library frames included.

            Example:
              calltrace record --hang 250ms -o app.trace -- ./app
              calltrace hangs app.trace
            """
    )

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: FilePath

    @Option(help: ArgumentHelp("The output format: \(ViewRegistry.help(of: .hangs)).", valueName: "format"))
    var format: String = ViewRegistry.formats(of: .hangs)[0]

    func validate() throws {
        try ViewSelection.check(format, command: .hangs)
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .hangs)
            let (trace, profile) = try ProfileLoading.read(file, lines: view.needsLines)
            let output = ByteOutput(sink: StandardOutput.writeAll)
            view.render(ViewInput([profile]), options: ViewOptions(), to: output)
            output.flush()
            TraceLoading.reportWarnings(of: trace)
        }
    }
}
