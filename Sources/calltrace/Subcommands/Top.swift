import ArgumentParser
import CalltraceKit

struct Top: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List functions by their total time over one or many runs, with per-call percentiles.",
        discussion: """
            One row per function (by module and name) over every thread of every trace given: calls, \
            total (a recursive call's time counted once), self, mean and the p50/p90/p95/p99/max of the \
            per-call costs (nearest rank). Given several traces it adds how many runs the function ran \
            in and the p50/p90/max of its total per run, so a launch can be watched over many runs.

            Example:
              calltrace top runs/                 # every runs/*.trace
              calltrace top app.trace --sort p99 --limit 10
            """
    )

    @Argument(help: "Trace files, or directories whose *.trace files are read.")
    var traces: [FilePath]

    @Option(help: ArgumentHelp("The output format: \(ViewRegistry.help(of: .top)).", valueName: "format"))
    var format: String = ViewRegistry.formats(of: .top)[0]

    @Option(help: ArgumentHelp("The order of the rows, largest first: "
                               + "\(TopSort.allCases.map(\.rawValue).joined(separator: ", ")) (name: A to Z).", valueName: "column"))
    var sort: TopSort = .total

    @Option(parsing: .unconditional,
            help: ArgumentHelp("List at most this many rows; 0 lists all. Default: 30 for text, all for json.",
                               valueName: "count"))
    var limit: Int?

    func validate() throws {
        try ViewSelection.check(format, command: .top)
        if let limit, limit < 0 { throw ValidationError("--limit \(limit): expected 0 (all) or more") }
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .top)
            let statistics = try ProfileLoading.statistics(traces)
            var options = ViewOptions()
            options.sort = sort
            options.limit = limit ?? (format == "text" ? 30 : 0)
            let output = ByteOutput(sink: StandardOutput.writeAll)
            view.render(ViewInput([], statistics: statistics), options: options, to: output)
            output.flush()
        }
    }
}

extension TopSort: ExpressibleByArgument {}
