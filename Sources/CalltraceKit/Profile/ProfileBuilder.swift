/// Reads a trace into a `Profile`, one path for a file and for bytes in memory (tests, the fuzz
/// target): the reader hands each call to one `ProfileAccumulator` as it decodes it, so the calls
/// are never held twice. `makeSymbolicator` gets the trace's modules once they are read;
/// `options.measured` makes totals measured durations, instrumentation overhead included
/// (`report --raw`).
public enum ProfileBuilder {
    public static func read(path: FilePath, options: TraceReader.Options = TraceReader.Options(),
                            makeSymbolicator: @escaping ([TraceModule]) -> Symbolicator) throws -> (Trace, Profile) {
        let accumulator = ProfileAccumulator(measured: options.measured, makeSymbolicator: makeSymbolicator)
        let trace = try TraceReader.read(path: path, options: options, sink: accumulator)
        return (trace, profile(of: trace, from: accumulator, source: "\(path)"))
    }

    /// Reads the trace at `path` handing each call to `consumer` as it is read, none kept: the
    /// profile comes back with everything but its calls (its threads have none).
    public static func stream(path: FilePath, options: TraceReader.Options = TraceReader.Options(),
                              into consumer: ProfileCallConsumer,
                              makeSymbolicator: @escaping ([TraceModule]) -> Symbolicator) throws -> (Trace, Profile) {
        let accumulator = ProfileAccumulator(measured: options.measured, makeSymbolicator: makeSymbolicator,
                                             consumer: consumer)
        let trace = try TraceReader.read(path: path, options: options, sink: accumulator)
        return (trace, profile(of: trace, from: accumulator, source: "\(path)"))
    }

    /// A trace held in memory, streamed as `stream(path:)` does (tests, the fuzz target).
    public static func stream(bytes: UnsafeRawBufferPointer, source: String = "",
                              options: TraceReader.Options = TraceReader.Options(), into consumer: ProfileCallConsumer,
                              makeSymbolicator: @escaping ([TraceModule]) -> Symbolicator) throws -> (Trace, Profile) {
        let accumulator = ProfileAccumulator(measured: options.measured, makeSymbolicator: makeSymbolicator,
                                             consumer: consumer)
        let trace = try TraceReader.read(bytes, options: options, sink: accumulator)
        return (trace, profile(of: trace, from: accumulator, source: source))
    }

    public static func stream(bytes: [UInt8], source: String = "", options: TraceReader.Options = TraceReader.Options(),
                              into consumer: ProfileCallConsumer,
                              makeSymbolicator: @escaping ([TraceModule]) -> Symbolicator) throws -> (Trace, Profile) {
        try bytes.withUnsafeBytes {
            try stream(bytes: $0, source: source, options: options, into: consumer, makeSymbolicator: makeSymbolicator)
        }
    }

    /// A trace held in memory; `source` names it in the profile's headings.
    public static func read(bytes: UnsafeRawBufferPointer, source: String = "",
                            options: TraceReader.Options = TraceReader.Options(),
                            makeSymbolicator: @escaping ([TraceModule]) -> Symbolicator) throws -> (Trace, Profile) {
        let accumulator = ProfileAccumulator(measured: options.measured, makeSymbolicator: makeSymbolicator)
        let trace = try TraceReader.read(bytes, options: options, sink: accumulator)
        return (trace, profile(of: trace, from: accumulator, source: source))
    }

    public static func read(bytes: [UInt8], source: String = "", options: TraceReader.Options = TraceReader.Options(),
                            makeSymbolicator: @escaping ([TraceModule]) -> Symbolicator) throws -> (Trace, Profile) {
        try bytes.withUnsafeBytes { try read(bytes: $0, source: source, options: options, makeSymbolicator: makeSymbolicator) }
    }

    private static func profile(of trace: Trace, from accumulator: ProfileAccumulator, source: String) -> Profile {
        let header = trace.header
        let piecesOf = Dictionary(grouping: trace.pieces, by: \.stream)
        let threads = trace.threads.map { info in
            accumulator.thread(stream: info.stream, info: info, isMain: info.tid == header.pid,
                               pieces: piecesOf[info.stream] ?? [])
        }
        let exit: Profile.Exit
        if header.crashed {
            exit = .crashed(signal: Int(clamping: header.signal))
        } else if header.closedCleanly {
            exit = .clean
        } else if trace.isStillRunning {
            exit = .stillRunning
        } else {
            exit = .unknown
        }
        let runtimeStarted = accumulator.instant(header.initTick)
        let hangs = trace.hangs.map { hang in
            var profileHang = ProfileHang(at: accumulator.instant(hang.capturedTick), quiet: accumulator.duration(hang.quietTicks),
                        tid: hang.tid, function: accumulator.function(at: hang.function, tick: hang.capturedTick),
                        callStart: accumulator.instant(hang.callStartTick), depth: hang.depth,
                        stack: hang.pcs.map { accumulator.function(at: $0, tick: hang.capturedTick) },
                        isPartial: hang.isPartial)
            profileHang.split = accumulator.split(stream: hang.stream,
                                                  start: Ticks(hang.capturedTick.count &- min(hang.quietTicks.count,
                                                                                              hang.capturedTick.count)),
                                                  end: hang.capturedTick)
            return profileHang
        }
        // Frames: those of the thread that marked the most (a program's render or event loop).
        let framesByThread = Dictionary(grouping: trace.frames, by: \.tid)
        let frameThread = framesByThread.max { ($0.value.count, $1.key) < ($1.value.count, $0.key) }
        var profile = Profile(
            source: source, pid: header.pid, program: trace.process?.executable ?? "",
            arguments: trace.process?.arguments ?? [],
            threshold: Nanoseconds(Int64(clamping: header.thresholdNs)), measured: accumulator.measured,
            functions: accumulator.functions, threads: threads, warnings: trace.warnings,
            mutedCount: max(trace.muted.count, Int(header.mutedCount)),
            processStartKnown: accumulator.processStartKnown, runtimeStarted: runtimeStarted,
            mainEntered: header.mainTick > .zero ? accumulator.instant(header.mainTick) : nil,
            ended: header.endTick > .zero ? accumulator.instant(header.endTick) : nil, exit: exit,
            unixTimeAtStart: accumulator.unixTimeAtStart)
        profile.marks = trace.marks.map {
            ProfileMark(name: $0.name, extra: $0.extra, at: accumulator.instant($0.tick), tid: $0.tid)
        }
        profile.frames = frameThread?.value.map { accumulator.instant($0.tick) } ?? []
        profile.frameThread = frameThread?.key
        if header.frameIntervalNs > 0 { profile.frameInterval = Nanoseconds(Int64(clamping: header.frameIntervalNs)) }
        profile.mutedCodeCompiler = BuildCompiler.ofMuted(in: trace)
        profile.hangs = hangs
        profile.filter = trace.filter
        profile.spans = spans(of: trace.spanEvents, instant: accumulator.instant, split: accumulator.split)
        profile.flightRecorder = trace.flightRecorder
        profile.muted = trace.muted.map {
            ProfileMutedFunction(function: accumulator.describe($0.function, tick: $0.mutedTick),
                                 estimatedCalls: Int(clamping: $0.estimatedCalls), insideOwnCallsOnly: $0.insideLevel != nil)
        }
        profile.hangThreshold = Nanoseconds(Int64(clamping: header.hangThresholdNs))
        return profile
    }
}

/// Function addresses to `ProfileFunction` indexes, each address symbolicated once (once per call
/// only when modules shared an address range over time, since then a name depends on when the
/// call ended).
struct FunctionInterner {
    let symbolicator: Symbolicator
    let modules: [TraceModule]
    private(set) var functions: [ProfileFunction] = []
    private var byAddress: [UInt64: Int32] = [:]
    private var byFunction: [ProfileFunction: Int32] = [:]
    private var lastAddress: UInt64 = 0
    private var lastIndex: Int32 = -1

    init(symbolicator: Symbolicator, modules: [TraceModule]) {
        self.symbolicator = symbolicator
        self.modules = modules
    }

    /// The variable at `address`, for what a thread was blocked on (`ThreadTime`).
    func dataSymbol(at address: UInt64) -> String? { symbolicator.dataSymbol(at: address) }

    mutating func index(of record: CallRecord) -> Int32 {
        index(ofAddress: record.function, atTick: record.endTick)
    }

    /// The function holding `address` when a call ending at `tick` ended (any address: a return
    /// address in a captured stack names the function it is in).
    mutating func index(ofAddress address: UInt64, atTick tick: Ticks) -> Int32 {
        let unambiguous = symbolicator.addressesAreUnambiguous
        if unambiguous {
            if address == lastAddress && lastIndex >= 0 { return lastIndex }
            if let known = byAddress[address] {
                lastAddress = address
                lastIndex = known
                return known
            }
        }
        let function = resolve(address, atTick: tick)
        let index: Int32
        if let known = byFunction[function] {
            index = known
        } else {
            index = Int32(functions.count)
            functions.append(function)
            byFunction[function] = index
        }
        if unambiguous {
            byAddress[address] = index
            lastAddress = address
            lastIndex = index
        }
        return index
    }

    /// The function at `address` when `tick` came, not interned.
    func function(ofAddress address: UInt64, atTick tick: Ticks) -> ProfileFunction {
        resolve(address, atTick: tick)
    }

    private func resolve(_ address: UInt64, atTick tick: Ticks) -> ProfileFunction {
        let symbol = symbolicator.symbolicate(address, atTick: tick)
        let module = symbolicator.module(holding: address, atTick: tick)
        let buildID = module.flatMap { $0.buildID.isEmpty ? nil : $0.buildIDHex }
        return ProfileFunction(name: symbol.name, module: symbol.module, buildID: buildID, file: symbol.file,
                               line: symbol.line)
    }
}

extension ProfileBuilder {
    /// SPAN_* events paired by id, in begin order. A milestone or end whose begin is not in the
    /// trace (a fork child ending its parent's span, or a begin lost to a full queue) is left out,
    /// as are a second end and milestones after the end.
    static func spans(of events: [TraceSpanEvent], instant: (Ticks) -> Instant,
                      split: (UInt32, Ticks, Ticks) -> TimeSplit?) -> [ProfileSpan] {
        var spans: [ProfileSpan] = []
        var open: [UInt64: Int] = [:]
        var begins: [Int: TraceSpanEvent] = [:]
        for event in events {
            switch event.kind {
            case .begin:
                open[event.id] = spans.count
                begins[spans.count] = event
                spans.append(ProfileSpan(name: event.name, extra: event.extra, begin: instant(event.tick), end: nil,
                                         beginTid: event.tid, endTid: nil))
            case .point:
                guard let index = open[event.id] else { continue }
                spans[index].milestones.append(.init(name: event.name, at: instant(event.tick), tid: event.tid))
            case .end:
                guard let index = open.removeValue(forKey: event.id) else { continue }
                spans[index].end = instant(event.tick)
                spans[index].endTid = event.tid
                if let begin = begins[index], begin.stream == event.stream, begin.stream != 0 {
                    spans[index].split = split(event.stream, begin.tick, event.tick)
                }
            }
        }
        return spans
    }
}
