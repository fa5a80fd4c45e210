import ArgumentParser
import CalltraceKit

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the calls in a trace as a tree or as JSON lines.",
        discussion: "When no call reached the threshold, stdout stays empty and a note on stderr says so."
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case tree, jsonl
    }

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: String

    @Option(help: "The output format: tree (indented call tree) or jsonl (one JSON object per call).")
    var format: Format = .tree

    // Taken unconditionally, so that `--threshold -1` says "negative" rather than "missing value".
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Show only calls lasting at least this long, such as 5ms (read as "
                               + "CALLTRACE_THRESHOLD is). Default: every recorded call.", valueName: "duration"))
    var threshold: String?

    @Flag(help: "Show measured durations, instrumentation overhead included, instead of costs with the overhead taken out.")
    var raw = false

    func validate() throws {
        if let threshold { try SettingArgument.check(threshold, flag: "--threshold", setting: .threshold) }
    }

    func run() throws {
        try Diagnostics.run {
            let minimumCost = try threshold.map {
                Nanoseconds(Int64(clamping: try SettingArgument.check($0, flag: "--threshold", setting: .threshold)))
            } ?? .zero
            // Calls under --threshold are never shown: leave them out while reading.
            let trace = try TraceLoading.load(file, options: TraceReader.Options(minimumDuration: minimumCost, measured: raw))
            let symbolicator = Symbolicator(modules: trace.modules, lines: format == .jsonl,
                                            warn: Diagnostics.warning)
            switch format {
            case .tree:
                let output = ByteOutput(sink: StandardOutput.writeAll)
                TreeRenderer(trace: trace, symbolicator: symbolicator, minimumCost: minimumCost, measured: raw)
                    .render(to: output)
                output.flush()
            case .jsonl:
                var output = StandardOutput()
                JSONLRenderer(trace: trace, symbolicator: symbolicator, minimumCost: minimumCost, measured: raw)
                    .render(to: &output)
                output.flush()
            }
            TraceLoading.reportWarnings(of: trace)
            if !trace.records.contains(where: { trace.clock.duration(ticks: $0.ticks(measured: raw)) >= minimumCost }) {
                Diagnostics.note(emptyReportNote(trace: trace, minimumCost: minimumCost))
            }
        }
    }

    /// Why nothing was printed: the recording threshold, or --threshold when it is the higher one.
    private func emptyReportNote(trace: Trace, minimumCost: Nanoseconds) -> String {
        let recorded = Nanoseconds(Int64(clamping: trace.header.thresholdNs))
        if threshold != nil && minimumCost > recorded {
            return "no call lasted \(Threshold.format(minimumCost)) or more (--threshold)"
        }
        return "no call lasted \(Threshold.format(recorded)) or more (the threshold it was recorded with)"
    }
}
