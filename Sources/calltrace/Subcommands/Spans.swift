import ArgumentParser
import CalltraceKit

struct Spans: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the program's spans by name over one or many runs, and the slowest with what ran inside them.",
        discussion: """
            The program names intervals with calltrace_span_begin() and calltrace_span_end() and their \
            milestones with calltrace_span_point() (calltrace.h). Per span name over every trace given: \
            how many ended, the p50/p90/p99/max of their durations (nearest rank), and each milestone's \
            time from the span's begin (p50/p90). Then the slowest spans of each name, each with its \
            milestones, the threads it began and ended on, the slowest calls that began inside it on \
            those threads, the frames it dropped (as `hitches` counts them) and the hangs inside it. \
            Spans that never ended are listed as unfinished and left out of the percentiles.

            Example:
              calltrace spans runs/                 # every runs/*.trace
              calltrace spans app.trace --worst 3 --format json
            """
    )

    @Argument(help: "Trace files, or directories whose *.trace files are read.")
    var traces: [FilePath]

    @Option(help: ArgumentHelp("The output format: \(ViewRegistry.help(of: .spans)).", valueName: "format"))
    var format: String = ViewRegistry.formats(of: .spans)[0]

    @Option(help: ArgumentHelp("How many of the slowest (and of the unfinished) spans of each name to list.",
                               valueName: "count"))
    var worst = 5

    func validate() throws {
        try ViewSelection.check(format, command: .spans)
        if worst < 1 { throw ValidationError("--worst \(worst) is not valid: expected 1 or more") }
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .spans)
            var statistics = SpanStatistics(limit: worst)
            try ProfileLoading.forEach(traces, lines: false) { statistics.add($0) }
            statistics.finish()
            var options = ViewOptions()
            options.limit = worst
            let output = ByteOutput(sink: StandardOutput.writeAll)
            view.render(ViewInput([], spanStatistics: statistics), options: options, to: output)
            output.flush()
        }
    }
}
