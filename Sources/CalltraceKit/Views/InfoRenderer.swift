import Foundation

/// A summary of a trace: the program, the recording settings, timings, threads and modules, and
/// the functions muted while it ran. `info`'s views (`InfoTextView`, `InfoJSONView`) write it.
public struct InfoRenderer {
    public let trace: Trace
    /// Names the muted functions; without one they are shown as addresses.
    public let symbolicator: Symbolicator?
    /// The muted functions' names, in `trace.muted`'s order (a profile's `muted`), used before
    /// `symbolicator`.
    public var mutedNames: [String] = []

    public init(trace: Trace, symbolicator: Symbolicator? = nil) {
        self.trace = trace
        self.symbolicator = symbolicator
    }

    public func render() -> String {
        let rows = self.rows()
        let width = rows.map(\.0.count).max() ?? 0
        var text = rows.map { $0.0 + ":" + String(repeating: " ", count: width - $0.0.count + 1) + $0.1 }
            .joined(separator: "\n") + "\n"
        text += "\nthreads:\n" + threadLines.joined()
        text += "\nmodules:\n" + trace.modules.map { module in
            let buildID = module.buildID.isEmpty ? "no build-id" : "build-id \(module.buildIDHex)"
            let gone = module.goneTick == nil ? "" : " (unloaded)"
            return "  \(TextFormat.hex(module.base)) \(module.path) \(buildID)\(gone)\n"
        }.joined()
        if !trace.muted.isEmpty {
            text += "\nmuted functions (no longer timed; their calls from then on, slow or not, are part of their callers' costs):\n"
                + trace.muted.indices.map(mutedLine).joined()
            if BuildCompiler.ofMuted(in: trace) == .gcc {
                text += "  (gcc built them with hooks: the code around their skipped hook calls still runs, and its cost is in\n"
                    + "  the callers' costs, which it can make several times too high (\(BuildCompiler.gccHooksMeasured));\n"
                    + "  a build with sleds (the default) has none; `calltrace exclude-list` on this trace lists them for a\n"
                    + "  build without them: docs/guide.md, a second build)\n"
            }
        }
        return text
    }

    /// One line per thread with calls in the trace, and the main thread's; the threads with none
    /// (a service that starts a short thread now and then may have thousands) in one line after them.
    var threadLines: [String] {
        let pid = trace.header.pid
        var lines: [String] = []
        var idle = 0
        for thread in trace.threads {
            let count = trace.callCounts[thread.stream] ?? 0
            let main = thread.tid == pid
            guard count > 0 || main else {
                idle += 1
                continue
            }
            let name = thread.name.isEmpty ? "" : " \"\(thread.name)\""
            lines.append("  \(thread.tid)\(name)\(main ? " (main)" : ""): \(count) call\(count == 1 ? "" : "s")\n")
        }
        if idle > 0 {
            let threads = "thread\(idle == 1 ? "" : "s") with no calls"
            lines.append(lines.isEmpty ? "  \(idle) \(threads)\n" : "  \u{2026} and \(idle) more \(threads)\n")
        }
        return lines
    }

    /// The summary's rows, (label, text), in the order shown.
    public func rows() -> [(String, String)] {
        let header = trace.header
        var rows: [(String, String)] = []
        rows.append(("program", trace.process?.executable ?? "unknown"))
        rows.append(("command line", trace.process.map(commandLine) ?? "unknown"))
        rows.append(("pid", pidText))
        rows.append(("recorded", recordedDate))
        rows.append(("threshold", Threshold.format(Nanoseconds(Int64(clamping: header.thresholdNs)))))
        rows.append(("clock", clockText))
        rows.append(("overhead", overheadText))
        // Version 4 samples thread states (the label as wide as the widest, so the rows stay put).
        if header.version >= 4, header.schedFlags & (TraceFormat.SchedFlag.sampled | TraceFormat.SchedFlag.unavailable) != 0 {
            rows.append(("thread state", threadStatesText))
        } else {
            rows.append(("preemption", preemptionText))
        }
        rows.append(("times", timesText))
        rows.append(("exit", exitText))
        rows.append(("recording", (header.tracesAllThreads ? "all threads" : "main thread only")
                     + ", max depth \(header.maxDepth)"))
        if let instrumented = instrumentedText { rows.append(("instrumented", instrumented)) }
        rows.append(("records", String(trace.callCount)))
        rows.append(("drops", dropsText))
        if header.hangThresholdNs != 0 { rows.append(("hangs", hangsText)) }
        if let filter = trace.filter { rows.append(("filter", filter.text)) }
        if !trace.restrictions.isEmpty {
            rows.append(("restricted", trace.restrictions.map { $0.text(header, clock: trace.clock) }.joined(separator: "; ")))
        }
        if let recorder = trace.flightRecorder { rows.append(("limit", recorder.text)) }
        if header.muteMode != 0 {
            rows.append(("muting", MutedFunction.modeText(header.muteMode) + ", \(header.mutedCount) muted"))
        }
        if !trace.marks.isEmpty || !trace.frames.isEmpty {
            rows.append(("marks", marksText))
        }
        if !trace.spanEvents.isEmpty { rows.append(("spans", spansText)) }
        rows.append(("symbols", symbolsText))
        return rows
    }

    /// "sleds (412 functions)", "hooks (-finstrument-functions)", or both; nil from a runtime that
    /// did not say (it had the hooks alone).
    /// Every call the recording lost, each count with its own reason.
    private var dropsText: String {
        let header = trace.header
        let parts: [(UInt64, String)] = [(header.callsDroppedForBlocks, "with no block to write to"),
                                         (header.nestedDrops, "in signal handlers"),
                                         (header.callsLostToMuting, "lost to muting")]
        let total = parts.reduce(UInt64(0)) { $0.addingReportingOverflow($1.0).partialValue }
        let given = parts.filter { $0.0 > 0 }
        if given.isEmpty || (given.count == 1 && given[0].1 == parts[0].1) { return String(total) }
        return "\(total) (" + given.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + ")"
    }

    private var instrumentedText: String? {
        let header = trace.header
        var parts: [String] = []
        if header.instrument & TraceFormat.Instrument.sleds != 0 {
            let unpatched = header.sledsUnpatched == 0 ? ""
                : ", \(header.sledsUnpatched) untimed: their code's protection could not be changed to patch them"
            parts.append("sleds (\(header.sledFunctions) function\(header.sledFunctions == 1 ? "" : "s")\(unpatched))")
        }
        if header.instrument & TraceFormat.Instrument.hooks != 0 { parts.append("hooks (-finstrument-functions)") }
        return parts.isEmpty ? nil : parts.joined(separator: " and ")
    }

    /// Whether the trace reads without the program's files: "stored in the trace (42 names, with
    /// source lines; 3120 bytes)", or where names come from.
    private var symbolsText: String {
        guard let stored = trace.storedSymbols else {
            return "not stored (names come from the program's files; calltrace symbolize stores them)"
        }
        let names = "\(stored.names) name\(stored.names == 1 ? "" : "s")"
        return "stored in the trace (self-contained: \(names), \(stored.hasLines ? "with" : "without") source lines; "
            + "\(stored.bytes) bytes)"
    }

    /// "6 begun, 5 ended": SPAN_BEGIN and SPAN_END records (an end without a begin is not counted).
    private var spansText: String {
        var begun = Set<UInt64>(), ended = Set<UInt64>()
        for event in trace.spanEvents {
            switch event.kind {
            case .begin: begun.insert(event.id)
            case .end: if begun.contains(event.id) { ended.insert(event.id) }
            case .point: break
            }
        }
        return "\(begun.count) begun, \(ended.count) ended"
    }

    /// "3 marks, 20 frames (target interval 16.67 ms)"
    private var marksText: String {
        let marks = trace.marks.count, frames = trace.frames.count
        let interval = trace.header.frameIntervalNs == 0 ? ""
            : " (target interval \(Nanoseconds(Int64(clamping: trace.header.frameIntervalNs))))"
        return "\(marks) mark\(marks == 1 ? "" : "s"), \(frames) frame\(frames == 1 ? "" : "s")\(interval)"
    }

    /// "  name: muted 85.31 ms after main entered, after ~1203840 calls, patched (2 sites)"
    /// The muted function's name, as `mutedNames` or the symbolicator give it, else its address.
    public func mutedName(_ index: Int) -> String {
        let muted = trace.muted[index]
        if mutedNames.indices.contains(index) { return mutedNames[index] }
        return symbolicator?.symbolicate(muted.function, atTick: muted.mutedTick).name ?? TextFormat.hex(muted.function)
    }

    /// The muted function's line in the text: its name, when and how it was muted.
    public func mutedLine(_ index: Int) -> String {
        let muted = trace.muted[index]
        let name = mutedName(index)
        let header = trace.header
        let when: String
        if header.mainTick > 0 && muted.mutedTick >= header.mainTick {
            when = TextFormat.milliseconds(trace.clock.duration(ticks: muted.mutedTick &- header.mainTick))
                + " ms after main entered"
        } else if muted.mutedTick >= header.initTick {
            when = TextFormat.milliseconds(trace.clock.duration(ticks: muted.mutedTick &- header.initTick))
                + " ms after runtime init"
        } else {
            when = "in the parent process, before the fork" // a fork child runs its parent's patched code
        }
        return "  \(name): muted \(when), "
            + "after ~\(muted.estimatedCalls) calls, \(muted.methodText)\n"
    }

    /// The arguments, and how many the runtime had to leave out.
    private func commandLine(_ process: TracedProcess) -> String {
        let shown = process.arguments.joined(separator: " ")
        guard process.omittedArguments > 0 else { return shown }
        let more = "\u{2026} (\(process.omittedArguments) more argument\(process.omittedArguments == 1 ? "" : "s"))"
        return shown.isEmpty ? more : shown + " " + more
    }

    private var pidText: String {
        guard let process = trace.process else { return String(trace.header.pid) }
        return "\(process.pid) (parent \(process.ppid))"
    }

    private var recordedDate: String {
        let seconds = Double(trace.header.realtimeNs0) / 1e9
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }

    private var clockText: String {
        guard trace.header.usesTSC else { return "CLOCK_MONOTONIC (ns)" }
        let rate = trace.clock.ticksPerNanosecond
        guard rate.isFinite, rate < 1e9 else { return "TSC, uncalibrated" }
        return "TSC, " + TextFormat.fixed(Int64(rate * 1000), scale: 3, decimals: 3) + " ticks/ns"
    }

    /// The calibrated hook costs that compensation took out of every recorded call.
    private var overheadText: String {
        let header = trace.header
        guard header.overheadPairTicks > .zero || header.overheadOwnTicks > .zero else {
            return "not compensated (no calibration in this trace)"
        }
        let pair = trace.clock.duration(ticks: header.overheadPairTicks)
        let own = trace.clock.duration(ticks: header.overheadOwnTicks)
        let untimed = header.overheadUntimedTicks == .zero ? ""
            : ", \(TextFormat.fixed(trace.clock.duration(ticks: header.overheadUntimedTicks).value, scale: 0, decimals: 0)) ns "
                + "per call not timed inside a recursion"
        return "\(TextFormat.fixed(pair.value, scale: 0, decimals: 0)) ns per timed call beneath a call, "
            + "\(TextFormat.fixed(own.value, scale: 0, decimals: 0)) ns of its own hooks\(untimed); taken out of costs "
            + "(report --raw shows measured times)"
    }

    /// "threshold 250 ms, 1 captured; partial stacks (...)": the hang watchdog (docs/design.md, "Hangs").
    private var hangsText: String {
        let header = trace.header
        var text = "threshold \(Threshold.format(Nanoseconds(Int64(clamping: header.hangThresholdNs)))), "
            + "\(header.hangCount) captured"
        // A flight recorder overwrites old hangs' records; a record can be lost (said below).
        if trace.hangs.count < Int(header.hangCount) { text += ", \(trace.hangs.count) in the trace" }
        let flags = header.hangFlags
        if flags & TraceFormat.HangFlag.unavailable != 0 { text += "; libunwind not found: instrumented frames only" }
        if flags & TraceFormat.HangFlag.signalOwned != 0 { text += "; the program owns the capture signal: left alone" }
        if flags & TraceFormat.HangFlag.partial != 0 { text += "; some stacks partial (no signal sent)" }
        if flags & TraceFormat.HangFlag.dropped != 0 { text += "; some hangs lost" }
        return text
    }

    /// What the run-delay sampler could do (docs/design.md, "Why a call was slow").
    private var preemptionText: String {
        let flags = trace.header.schedFlags
        if flags & TraceFormat.SchedFlag.unavailable != 0 { return "not sampled (no /proc/self/task/*/schedstat)" }
        guard flags & TraceFormat.SchedFlag.sampled != 0 else { return "not sampled" }
        let partial = flags & TraceFormat.SchedFlag.partial != 0 ? "; some threads not sampled" : ""
        let waits = trace.runDelays.count
        return "run delay sampled every \(trace.header.schedPeriodUs / 1000) ms or more, "
            + "\(waits) sample\(waits == 1 ? "" : "s") with waiting\(partial)"
    }

    /// What the thread-state sampler could do (version 4 on; docs/design.md, "Why a call was slow").
    private var threadStatesText: String {
        let flags = trace.header.schedFlags
        if flags & TraceFormat.SchedFlag.unavailable != 0 {
            return "unknown: no /proc/self/task/*/schedstat (where calls' time went is unknown)"
        }
        guard flags & TraceFormat.SchedFlag.sampled != 0 else { return "not sampled" }
        let samples = trace.threadStates.count
        var text = "sampled every 2-8 ms inside calls longer than a quarter of the threshold (at least 1.8 ms); "
            + "\(samples) sample\(samples == 1 ? "" : "s")"
        if flags & TraceFormat.SchedFlag.partial != 0 { text += "; some threads not sampled" }
        if flags & TraceFormat.SchedFlag.stateUnreadable != 0 {
            text += "; unknown: /proc/self/task/*/syscall could not be read (what threads were blocked in is unknown)"
        }
        return text
    }

    /// process start -> runtime init -> main entered (-> exit), each step in ms.
    private var timesText: String {
        let header = trace.header
        let clock = trace.clock
        let initTime = clock.monotonic(tick: header.initTick)
        var parts: [String] = []
        if header.processStartNs > 0 {
            let start = Nanoseconds(Int64(clamping: header.processStartNs))
            parts.append("process start -> runtime init " + TextFormat.milliseconds(initTime - start) + " ms")
        } else {
            parts.append("runtime init")
        }
        guard header.mainTick > 0 else { return parts.joined() + " -> main entered: unknown" }
        let mainTime = clock.monotonic(tick: header.mainTick)
        parts.append("main entered " + TextFormat.milliseconds(mainTime - initTime) + " ms")
        if header.endTick > 0 {
            parts.append("exit " + TextFormat.milliseconds(clock.monotonic(tick: header.endTick) - mainTime) + " ms")
        }
        return parts.joined(separator: " -> ")
    }

    private var exitText: String {
        let header = trace.header
        if header.crashed { return "crashed (signal \(header.signal))" }
        if trace.isStillRunning { return "still running (the trace holds what it recorded so far)" }
        if !header.closedCleanly { return "killed (the trace was not closed cleanly)" }
        return "clean"
    }
}
