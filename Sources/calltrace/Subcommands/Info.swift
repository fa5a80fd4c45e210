import ArgumentParser
import CalltraceKit

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Summarise a trace: program, settings, timings, threads and modules.",
        discussion: """
            Also says what was lost and why (drops, a crash, a full disk), how the overhead was \
            calibrated and which functions were muted.

            Example:
              calltrace info app.trace
            """
    )

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: FilePath

    func run() throws {
        try Diagnostics.run {
            let trace = try TraceLoading.load(file, options: TraceReader.Options(keepCalls: false))
            var output = StandardOutput()
            let symbolicator = trace.muted.isEmpty ? nil
                : Symbolicator(modules: trace.modules, warn: Diagnostics.warning)
            output.write(InfoRenderer(trace: trace, symbolicator: symbolicator).render())
            output.flush()
            TraceLoading.reportWarnings(of: trace)
        }
    }
}
