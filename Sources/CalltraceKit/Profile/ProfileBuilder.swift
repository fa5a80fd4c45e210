/// Builds a `Profile` from a trace: the one place where ticks become instants and durations and
/// addresses become functions. Each function address is symbolicated once (once per call only
/// when modules shared an address range over time, since then a name depends on when the call
/// ended).
public struct ProfileBuilder {
    public var trace: Trace
    public var symbolicator: Symbolicator
    /// Totals are measured durations, instrumentation overhead included (`report --raw`).
    public var measured = false
    /// The trace file's path, kept in the profile for headings.
    public var source = ""

    public init(trace: Trace, symbolicator: Symbolicator) {
        self.trace = trace
        self.symbolicator = symbolicator
    }

    public func build() -> Profile {
        let header = trace.header
        let clock = trace.clock
        // Instants count from the process's start when the trace knows it, else from the runtime's.
        let initTime = clock.monotonic(tick: header.initTick)
        let processStartKnown = header.processStartNs > 0 && Int64(clamping: header.processStartNs) <= initTime.value
        let origin = processStartKnown ? Nanoseconds(Int64(clamping: header.processStartNs)) : initTime
        func instant(_ tick: Ticks) -> Instant { Instant(sinceStart: clock.monotonic(tick: tick) - origin) }

        var functions = FunctionInterner(symbolicator: symbolicator, modules: trace.modules)
        let preemption = Preemption(trace: trace)
        var threads: [ProfileThread] = []
        threads.reserveCapacity(trace.threads.count)
        for info in trace.threads {
            var thread = ProfileThread(tid: info.tid, name: info.name, isMain: info.tid == header.pid)
            let records = trace.records(ofStream: info.stream)
            let tree = CallTreeBuilder.build(records: records, stream: info.stream)
            let count = tree.count
            thread.function.reserveCapacity(count)
            thread.start.reserveCapacity(count)
            thread.total.reserveCapacity(count)
            thread.overhead.reserveCapacity(count)
            thread.depthAndFlags.reserveCapacity(count)
            let markMinimum = clock.ticks(in: Preemption.markMinimum)
            for (index, record) in records.prefix(count).enumerated() {
                thread.function.append(functions.index(of: record))
                thread.start.append(instant(record.startTick).sinceStart.value)
                thread.total.append(clock.duration(ticks: record.ticks(measured: measured)).value)
                thread.overhead.append(UInt32(clamping: clock.duration(ticks: record.overheadTicks).value))
                var flags: ProfileThread.CallFlags = []
                if record.isUnfinished { flags.insert(.unfinished) }
                if record.isUnwound { flags.insert(.unwound) }
                if preemption.hasDelays && record.durationTicks >= markMinimum {
                    let preempted = preemption.preempted(record)
                    if preempted > .zero {
                        flags.insert(.preempted)
                        thread.preemptedTime[Int32(index)] = preempted.value
                    }
                }
                thread.depthAndFlags.append(min(record.depth, 0xFF_FFFF) | UInt32(flags.rawValue) << 24)
            }
            thread.roots = tree.roots.map { Int32($0) }
            thread.firstChild = tree.firstChild
            thread.nextSibling = tree.nextSibling
            thread.parent = tree.parent
            threads.append(thread)
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
        return Profile(
            source: source, pid: header.pid, program: trace.process?.executable ?? "",
            arguments: trace.process?.arguments ?? [],
            threshold: Nanoseconds(Int64(clamping: header.thresholdNs)), measured: measured,
            functions: functions.functions, threads: threads, warnings: trace.warnings,
            mutedCount: max(trace.muted.count, Int(header.mutedCount)), processStartKnown: processStartKnown,
            runtimeStarted: instant(header.initTick),
            mainEntered: header.mainTick > .zero ? instant(header.mainTick) : nil,
            ended: header.endTick > .zero ? instant(header.endTick) : nil, exit: exit,
            unixTimeAtStart: clock.unixTime(tick: header.initTick) - (initTime - origin))
    }
}

/// Function addresses to `ProfileFunction` indexes, each address symbolicated once.
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

    mutating func index(of record: CallRecord) -> Int32 {
        let unambiguous = symbolicator.addressesAreUnambiguous
        if unambiguous {
            if record.function == lastAddress && lastIndex >= 0 { return lastIndex }
            if let known = byAddress[record.function] {
                lastAddress = record.function
                lastIndex = known
                return known
            }
        }
        let function = resolve(record.function, atTick: record.endTick)
        let index: Int32
        if let known = byFunction[function] {
            index = known
        } else {
            index = Int32(functions.count)
            functions.append(function)
            byFunction[function] = index
        }
        if unambiguous {
            byAddress[record.function] = index
            lastAddress = record.function
            lastIndex = index
        }
        return index
    }

    private func resolve(_ address: UInt64, atTick tick: Ticks) -> ProfileFunction {
        let symbol = symbolicator.symbolicate(address, atTick: tick)
        let module = symbolicator.module(holding: address, atTick: tick)
        let buildID = module.flatMap { $0.buildID.isEmpty ? nil : $0.buildIDHex }
        return ProfileFunction(name: symbol.name, module: symbol.module, buildID: buildID, file: symbol.file,
                               line: symbol.line)
    }
}
