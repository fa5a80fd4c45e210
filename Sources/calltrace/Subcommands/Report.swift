import ArgumentParser
import CalltraceKit

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the calls in a trace as a tree, as JSON lines or as one JSON document.",
        discussion: """
            When no call reached the threshold, stdout stays empty and a note on stderr says so.

            C++, Rust and Swift names are shown demangled. A stripped binary's functions and lines \
            come from its separate debug file, found by build-id under /usr/lib/debug (or the \
            directories CALLTRACE_DEBUG_DIR lists, separated by colons) or through its \
            .gnu_debuglink (next to the binary or in its .debug/ directory).

            Examples:
              calltrace report app.trace
              calltrace report app.trace --threshold 5ms --self --collapse --lines
              calltrace report app.trace --format jsonl | jq 'select(.depth == 1)'
            """
    )

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: FilePath

    @Option(help: ArgumentHelp("The output format: \(ViewRegistry.help(of: .report)).", valueName: "format"))
    var format: String = ViewRegistry.formats(of: .report)[0]

    // Taken unconditionally, so that `--threshold -1` says "negative" rather than "missing value".
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Show only calls lasting at least this long, such as 5ms (read as "
                               + "CALLTRACE_THRESHOLD is). Default: every recorded call.", valueName: "duration"))
    var threshold: DurationArgument?

    @Flag(help: "Show measured durations, instrumentation overhead included, instead of costs with the overhead taken out.")
    var raw = false

    @Flag(help: ArgumentHelp("Leave out calls that reached the threshold only because their thread was waiting "
                             + "for a CPU (their cost minus their preempted time is under it); calls under them "
                             + "that reach it on their own move up under the nearest call shown. Default: every "
                             + "call is shown."))
    var hidePreempted = false

    @Flag(name: .customLong("self"), help: "tree: add a column of self time (the cost less the recorded calls beneath).")
    var showSelf = false

    @Flag(help: ArgumentHelp("tree: print a chain of calls, each the only recorded call of its parent and taking at "
                             + "least 95% of its time, as one line (main > run > ... > loop)."))
    var collapse = false

    @Flag(help: ArgumentHelp("tree: follow each name with the source file and line of the function's entry, "
                             + "from DWARF, such as `main (app.c:12)`; a file is shown by its base name unless "
                             + "two files share it. Default: names only."))
    var lines = false

    func validate() throws {
        _ = try threshold?.check(flag: "--threshold")
        try ViewSelection.check(format, command: .report)
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .report)
            let minimumCost = threshold?.value ?? .zero
            // Calls under --threshold are never shown: leave them out while reading.
            let readOptions = TraceReader.Options(minimumDuration: minimumCost, measured: raw)
            var options = ViewOptions()
            options.minimumCost = minimumCost
            options.hidePreempted = hidePreempted
            options.showSelf = showSelf
            options.collapse = collapse
            options.colour = Terminal.standardOutputColours
            options.lines = lines
            // JSON lines are written as the calls are read: memory stays flat however many there are.
            let run = try ViewRunner.run(view, of: file, readOptions: readOptions, lines: view.needsLines || lines,
                                         options: options, write: StandardOutput.write)
            let anyReachedMinimum: Bool
            // The main thread waited on threads that were not recorded (not known when streamed).
            var otherThreadsHint: String?
            if let stream = run.stream {
                // The calls are gone: the stream counted those that reached --threshold as they came.
                anyReachedMinimum = (stream as? ReportJSONLStream)?.anyReachedMinimum ?? true
            } else {
                anyReachedMinimum = run.profile.threads.contains { thread in
                    (0..<thread.count).contains { thread.cost($0) >= minimumCost }
                }
                otherThreadsHint = OtherThreadWaits.hint(for: run.profile, tracesAllThreads: run.trace.header.tracesAllThreads)
            }
            TraceLoading.reportWarnings(of: run.trace)
            preemptionNotes(trace: run.trace).forEach(Diagnostics.note)
            otherThreadsHint.map(Diagnostics.note)
            if !anyReachedMinimum { Diagnostics.note(emptyReportNote(trace: run.trace, minimumCost: minimumCost)) }
        }
    }

    /// What the trace cannot say about preempted time.
    private func preemptionNotes(trace: Trace) -> [String] {
        typealias Flag = TraceFormat.SchedFlag
        let flags = trace.header.schedFlags
        if flags & Flag.unavailable != 0 {
            return ["run delay could not be sampled (no /proc/PID/task/TID/schedstat: a kernel without "
                    + "CONFIG_SCHED_INFO); no call is marked (preempted)"
                    + (hidePreempted ? " and --hide-preempted hides nothing" : "")]
        }
        var notes: [String] = []
        if flags & Flag.sampled == 0 && hidePreempted {
            notes.append("the trace holds no run-delay samples (recorded by an older calltrace, or its drain "
                         + "thread could not run); --hide-preempted hides nothing")
        }
        if flags & Flag.partial != 0 {
            notes.append("run delay was not sampled for some threads (too many recording threads at once, or "
                         + "their schedstat files could not be opened); their calls are never marked (preempted)")
        }
        return notes
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
