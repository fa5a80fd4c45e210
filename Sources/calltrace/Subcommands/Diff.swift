import ArgumentParser
import CalltraceKit

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two sets of runs function by function: regressions first, then improvements, new and gone.",
        discussion: """
            Each function's total (mean per run), calls (mean per run) and p90 per call, in BASE and NEW. \
            With several runs a side (4 or more at the default --alpha), each function's per-run totals \
            are compared with a Mann-Whitney U test, as Go's benchstat does: a change counts when its \
            p-value is under --alpha and it exceeds --noise-floor; the others show ~. With one run a \
            side (or too few for a verdict, which it says), a change counts when it exceeds both --noise \
            (a share of the base total) and --noise-floor; a new or gone function when its total \
            exceeds --noise-floor. Exits 0 whatever changed: `calltrace check NEW --baseline BASE \
            --max-regression 20%` fails a build on a slowdown.

            Example:
              calltrace diff before/ after/ --noise 10% --noise-floor 1ms
            """
    )

    @Argument(help: "The baseline: a trace file or a directory of *.trace files.")
    var base: FilePath

    @Argument(help: "The runs to compare with it: a trace file or a directory of *.trace files.")
    var new: FilePath

    @Option(help: ArgumentHelp("The output format: \(ViewRegistry.help(of: .diff)).", valueName: "format"))
    var format: String = ViewRegistry.formats(of: .diff)[0]

    @Option(help: ArgumentHelp("Changes up to this share of the base total are noise, such as 5% (or 0.05).",
                               valueName: "share"))
    var noise = ShareArgument(ViewOptions().noiseShare)

    @OptionGroup var significance: SignificanceOptions

    @Flag(help: "List the functions within noise too.")
    var all = false

    func validate() throws {
        try ViewSelection.check(format, command: .diff)
        _ = try noise.check(flag: "--noise")
        _ = try significance.significanceLevel()
        _ = try significance.floor()
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .diff)
            var options = ViewOptions()
            options.noiseShare = try noise.check(flag: "--noise")
            options.noiseFloor = try significance.floor()
            options.showUnchanged = all
            options.alpha = try significance.significanceLevel()
            let baseline = try ProfileLoading.statistics([base])
            let statistics = try ProfileLoading.statistics([new])
            let output = ByteOutput(sink: StandardOutput.writeAll)
            view.render(ViewInput([], statistics: statistics, baselineStatistics: baseline), options: options, to: output)
            output.flush()
        }
    }
}
