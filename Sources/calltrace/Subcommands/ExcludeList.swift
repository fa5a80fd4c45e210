import ArgumentParser
import CalltraceKit
import Foundation

struct ExcludeList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exclude-list",
        abstract: "List the hot, always-fast functions of traces, for gcc to leave uninstrumented.",
        discussion: """
            Reads one or more traces (or directories of them) and writes the functions that ran \
            hot and fast: one name per line, a comment after each (`# N calls, longest X`). Any \
            trace will do. One recorded with the default settings names the functions the runtime \
            muted while the program ran (its MUTED records: thousands of calls, none near the \
            threshold, never one of a recursion still open). One recorded at threshold 0 \
            (`calltrace record -t 0`, which never mutes) holds every call, and adds the functions \
            called at least --min-calls times whose calls cost less than --max-cost. A function \
            with more than --outliers percent of its calls at --max-cost or more, in any trace \
            given, is not listed.

            Build again with CALLTRACE_EXCLUDE=FILE and Scripts/calltrace-cc or calltrace-c++: \
            those functions get no instrumentation and their time counts in their callers. With \
            sleds (the default) the names go to calltrace's GCC plugin or to clang's \
            -fxray-never-instrument; a muted function with sleds already costs what it does \
            uninstrumented but for a jump, so the list mainly leaves out functions never to be \
            timed. With hooks (CALLTRACE_INSTRUMENT=hooks) and gcc they go to \
            -finstrument-functions-exclude-function-list, which removes what muting cannot: gcc's \
            code around a muted function's skipped hook calls (register saves, argument loads) \
            still runs. clang's hooks have no such option (the wrappers warn and build as usual).

            gcc (plugin or hooks) excludes every function whose name CONTAINS a listed name \
            (`step` would also exclude `next_step`). So a name is left out of the list when it is \
            part of the name of another function of the program that is not excluded, whether or \
            not the trace saw it called; the note on stderr says which.

            C functions are listed by name (a gcc clone such as `f.constprop.0` as `f`). C++ \
            functions are listed as gcc matches them, qualified and without parameters \
            (`ns::Parser::peek`), which excludes every overload of that name; templates, operators, \
            lambdas and functions in anonymous namespaces are left out, since gcc prints their \
            names differently from the demangler; so are Rust and Swift functions, which gcc \
            did not compile.

            The defaults pick functions whose hooks matter (10,000 calls at about 20 ns of hooks \
            each) and whose calls are a thousand times shorter than a usual threshold (10 us \
            against 10 ms), so a trace would never show them anyway.

            A few calls of a tiny function last long without being slow: its thread was preempted \
            or interrupted, or it ran cold the first time. --outliers allows for them; the comment \
            after each name shows the longest call, to check by eye before building with the list.

            Example (a second build):
              make CC=calltrace-cc && calltrace record -o run.trace -- ./app
              calltrace exclude-list run.trace -o hot.txt
              make clean && CALLTRACE_EXCLUDE=$PWD/hot.txt make CC=calltrace-cc
            """
    )

    @Argument(help: ArgumentHelp("Traces, or directories of *.trace files: any threshold (the muted functions), "
                                 + "or 0 (every call counted).", valueName: "trace"))
    var files: [FilePath]

    @Option(name: .shortAndLong,
            help: ArgumentHelp("The list to write; an existing file is replaced. Default: standard output.",
                               valueName: "file"))
    var output: FilePath?

    @Option(name: .customLong("min-calls"),
            help: ArgumentHelp("List a function of a threshold-0 trace only when it was called at least this many times "
                               + "(a muted function always is: the runtime counted it hot). Default: 10000.",
                               valueName: "count"))
    var minCallsOption: Int?

    // Taken unconditionally, so that `--max-cost -1` says "negative" rather than "missing value".
    @Option(name: .customLong("max-cost"), parsing: .unconditional,
            help: ArgumentHelp("List a function only when its calls (all but --outliers of them) lasted less than "
                               + "this, such as 10us (read as CALLTRACE_THRESHOLD is). Default: 10us.",
                               valueName: "duration"))
    var maxCostOption: DurationArgument?

    @Option(name: .customLong("outliers"),
            help: ArgumentHelp("The share of a function's calls, in percent, that may last --max-cost or longer "
                               + "and still leave it listed. Default: 0.1.", valueName: "percent"))
    var outliersOption: Double?

    // Optional so that the help states each default once, in its sentence.
    private var minCalls: Int { minCallsOption ?? 10_000 }
    private var maxCost: DurationArgument { maxCostOption ?? DurationArgument(Nanoseconds(10_000)) }
    private var outliers: Double { outliersOption ?? 0.1 }

    func validate() throws {
        if files.isEmpty {
            throw ValidationError("give at least one trace (or a directory of them)")
        }
        if minCalls < 1 {
            throw ValidationError("--min-calls \(minCalls) is not valid: expected a number of calls, 1 or more")
        }
        if try maxCost.check(flag: "--max-cost") == .zero {
            throw ValidationError("--max-cost \(maxCost) is not valid: no call lasts less than 0; give a duration such as 10us")
        }
        if !(0...100).contains(outliers) {
            throw ValidationError("--outliers \(outliers) is not valid: expected a percentage from 0 to 100")
        }
    }

    func run() throws {
        try Diagnostics.run {
            let limit = maxCost.value ?? .zero
            var selection = HotFastFunctions(criteria: .init(minCalls: minCalls, maxCost: limit, outliers: outliers))
            let paths = try ProfileLoading.files(files)
            for path in paths {
                let (trace, profile) = try ProfileLoading.read(path, lines: false)
                TraceLoading.reportWarnings(of: trace)
                if profile.threshold > .zero && profile.muted.isEmpty {
                    Diagnostics.note("\(path): recorded at threshold \(Threshold.format(profile.threshold)) with no "
                                     + "function muted (muting off, or nothing ran hot): it lists nothing, and only "
                                     + "vetoes functions with slow calls")
                }
                selection.add(profile, modules: trace.modules)
            }
            selection.select()
            let text = listText(selection, paths: paths, limit: limit)
            if let output {
                try OutputFile.write(Array(text.utf8), to: output)
            } else {
                var out = StandardOutput()
                out.write(text)
                out.flush()
            }
            summarise(selection, limit: limit)
        }
    }

    // MARK: - Writing

    private func listText(_ selection: HotFastFunctions, paths: [FilePath], limit: Nanoseconds) -> String {
        let from = paths.count == 1 ? "\(paths[0])" : "\(paths.count) traces"
        var text = """
            # calltrace exclude-list, from \(from): the functions the runtime muted, and those of threshold-0
            # traces called at least \(minCalls) times; calls under \(Threshold.format(limit)) (all but \(outliers) %).
            # One name per line; gcc excludes every function whose name contains one.
            # Use: CALLTRACE_EXCLUDE=<this file> with Scripts/calltrace-cc or calltrace-c++ (gcc only).

            """
        for function in selection.listed {
            let longest = function.longest > .zero ? ", longest recorded \(Self.format(function.longest))" : ""
            text += "\(function.name)  # \(function.calls) calls\(function.muted ? ", muted" : "")\(longest)\n"
        }
        return text
    }

    private func summarise(_ selection: HotFastFunctions, limit: Nanoseconds) {
        let calls = selection.listed.reduce(0) { $0 + $1.calls }
        let share = selection.tracedCalls > 0 ? Double(calls) / Double(selection.tracedCalls) * 100 : 0
        let count = selection.listed.count
        if count == 0 {
            Diagnostics.note("no function was muted, or called \(minCalls) times or more with its calls under "
                             + "\(Threshold.format(limit)): the list is empty")
        } else {
            Diagnostics.note("\(count) function\(count == 1 ? "" : "s") listed, \(calls) of the trace's "
                             + "\(selection.tracedCalls) calls (\(String(format: "%.1f", share)) %)")
        }
        if !selection.clashing.isEmpty {
            let names = selection.clashing.prefix(5).map { "\($0.name) (in \($0.within))" }.joined(separator: ", ")
            Diagnostics.note("\(selection.clashing.count) hot, fast function\(selection.clashing.count == 1 ? "" : "s") "
                             + "left out because gcc would also exclude a function whose name contains it: \(names)"
                             + (selection.clashing.count > 5 ? ", ..." : ""))
        }
        if !selection.unnameable.isEmpty {
            let names = selection.unnameable.prefix(3).joined(separator: ", ")
            Diagnostics.note("\(selection.unnameable.count) hot, fast function\(selection.unnameable.count == 1 ? "" : "s") "
                             + "left out whose name gcc prints differently (templates, operators, lambdas, "
                             + "unnamed, Rust, Swift): \(names)" + (selection.unnameable.count > 3 ? ", ..." : ""))
        }
    }

    /// `350ns`, `1.2us`: the short units of thresholds, down to nanoseconds.
    private static func format(_ cost: Nanoseconds) -> String {
        cost.value < 1_000 ? "\(cost.value)ns" : Threshold.format(cost)
    }
}
