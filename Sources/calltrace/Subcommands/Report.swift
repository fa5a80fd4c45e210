import ArgumentParser
import CalltraceKit

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the calls in a trace as a tree or as JSON lines.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case tree, jsonl
    }

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: String

    @Option(help: "The output format: tree (indented call tree) or jsonl (one JSON object per call).")
    var format: Format = .tree

    @Option(help: "Show only calls lasting at least this long (such as 5ms); by default every recorded call is shown.")
    var threshold: String?

    func validate() throws {
        if let threshold { _ = try ThresholdArgument.parse(threshold) }
    }

    func run() throws {
        try Diagnostics.run {
            let minimumCost = try threshold.map { try ThresholdArgument.parse($0) } ?? .zero
            // Calls under --threshold are never shown: leave them out while reading.
            let trace = try TraceLoading.load(file, options: TraceReader.Options(minimumDuration: minimumCost))
            let symbolicator = Symbolicator(modules: trace.modules, lines: format == .jsonl,
                                            warn: Diagnostics.warning)
            switch format {
            case .tree:
                let output = ByteOutput(sink: StandardOutput.writeAll)
                TreeRenderer(trace: trace, symbolicator: symbolicator, minimumCost: minimumCost).render(to: output)
                output.flush()
            case .jsonl:
                var output = StandardOutput()
                JSONLRenderer(trace: trace, symbolicator: symbolicator, minimumCost: minimumCost).render(to: &output)
                output.flush()
            }
            TraceLoading.reportWarnings(of: trace)
        }
    }
}
