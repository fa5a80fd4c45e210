import Glibc

/// Turns calls into profile columns one call at a time, the only place where a call's ticks become
/// an `Instant` and `Nanoseconds` and its address a function. It takes the calls straight from the
/// reader (`ProfileBuilder`), so that a profile of ten million calls never also holds them as
/// `CallRecord`s.
final class ProfileAccumulator: CallRecordSink {
    /// One stream's calls so far, in the order they came.
    struct Columns {
        var function: [Int32] = []
        var start: [Int64] = []
        var total: [Int64] = []
        var overhead: [UInt32] = []
        var depthAndFlags: [UInt32] = []
        var preemptedTime: [Int32: Int64] = [:]
        var timeSplits: [Int32: TimeSplit] = [:]
        /// Calls handed to the consumer instead (none are kept then).
        var streamed = 0
        var count: Int { function.count + streamed }
    }

    let measured: Bool
    private let makeSymbolicator: ([TraceModule]) -> Symbolicator
    private var clock: TickClock?
    private var origin = Nanoseconds.zero
    private var interner: FunctionInterner?
    private var preemption: Preemption?
    private var threadTime: ThreadTime?
    private var markMinimum = Ticks.zero
    private(set) var processStartKnown = false
    private var columns: [Columns] = []
    private var indexOf: [UInt32: Int] = [:]
    /// The stream of the previous call and its columns' index: nil before the first call (any
    /// UInt32, UInt32.max included, is a stream id a crafted trace can hold).
    private var lastStream: UInt32?
    private var lastIndex = 0

    /// When set, each call goes to it as it comes and none is kept: the profile's threads have
    /// no calls (`ProfileBuilder.stream`).
    private let consumer: ProfileCallConsumer?
    /// The unix time of the profile's instant zero, once `begin` has the header.
    private(set) var unixTimeAtStart = Nanoseconds.zero

    init(measured: Bool, makeSymbolicator: @escaping ([TraceModule]) -> Symbolicator,
         consumer: ProfileCallConsumer? = nil) {
        self.measured = measured
        self.makeSymbolicator = makeSymbolicator
        self.consumer = consumer
    }

    /// Before the first call: the header and the metadata (modules, run delays) read so far.
    func begin(header: TraceHeader, modules: [TraceModule], runDelays: [RunDelay], threadStates: [ThreadStateSample]) {
        let clock = TickClock(header: header)
        self.clock = clock
        // Instants count from the process's start when the trace knows it, else from the runtime's.
        let initTime = clock.monotonic(tick: header.initTick)
        processStartKnown = header.processStartNs > 0 && Int64(clamping: header.processStartNs) <= initTime.value
        origin = processStartKnown ? Nanoseconds(Int64(clamping: header.processStartNs)) : initTime
        let interner = FunctionInterner(symbolicator: makeSymbolicator(modules), modules: modules)
        self.interner = interner
        var trace = Trace(header: header, process: nil, modules: modules, threads: [], warnings: [])
        trace.runDelays = runDelays
        let preemption = Preemption(trace: trace)
        self.preemption = preemption.hasDelays ? preemption : nil
        trace.threadStates = threadStates
        let threadTime = ThreadTime(trace: trace) { interner.dataSymbol(at: $0) }
        self.threadTime = threadTime.hasSamples ? threadTime : nil
        markMinimum = clock.ticks(in: Preemption.markMinimum)
        unixTimeAtStart = clock.unixTime(tick: header.initTick) - instant(header.initTick).sinceStart
        consumer?.begin(unixTimeAtStart: unixTimeAtStart, measured: measured,
                        threshold: Nanoseconds(Int64(clamping: header.thresholdNs)))
    }

    /// Instants and durations are kept within 2^50 ns (13 days) of the start: a real trace never
    /// comes near, and a crafted one then cannot make a view's sums or differences overflow.
    static let limit: Int64 = 1 << 50

    func instant(_ tick: Ticks) -> Instant {
        guard let clock else { return .start }
        return Instant(nanoseconds: Self.clamped((clock.monotonic(tick: tick) - origin).value))
    }

    @inline(__always) static func clamped(_ ns: Int64) -> Int64 { min(max(ns, -limit), limit) }

    /// The payload bytes of each stream's blocks (`expect`), to size its columns once.
    private var payloadBytes: [UInt32: Int] = [:]

    /// A call takes 7 to 8 bytes of payload on the bench's workloads; room for one call per
    /// `bytesPerCallGuess` bytes is made up front, so the columns are not grown by doubling: each
    /// doubling copied them and, for a while, held both copies (and faulted in fresh pages for the
    /// new one). Room never used is address space only, never touched, so not resident.
    static let bytesPerCallGuess = 4

    /// At most this many calls' room up front (a sparse file's holes count as payload): the columns'
    /// 28 bytes a call within an eighth of the machine's memory, so reserving can never fail.
    static let roomLimit: Int = {
        let memory = max(sysconf(Int32(_SC_PHYS_PAGES)), 0) * max(sysconf(Int32(_SC_PAGESIZE)), 0)
        return min(memory / 8 / 28, Int(Int32.max))
    }()

    func expect(payloadBytes: [UInt32: Int]) {
        self.payloadBytes = payloadBytes
    }

    func add(_ call: CallRecord) {
        guard let clock else { return }
        if call.stream != lastStream {
            lastStream = call.stream
            if let known = indexOf[call.stream] {
                lastIndex = known
            } else {
                lastIndex = columns.count
                indexOf[call.stream] = lastIndex
                var new = Columns()
                let room = min((payloadBytes[call.stream] ?? 0) / Self.bytesPerCallGuess, Self.roomLimit)
                if room > 0 {
                    new.function.reserveCapacity(room)
                    new.start.reserveCapacity(room)
                    new.total.reserveCapacity(room)
                    new.overhead.reserveCapacity(room)
                    new.depthAndFlags.reserveCapacity(room)
                }
                columns.append(new)
            }
        }
        let index = columns[lastIndex].count
        // Tree links are Int32: a stream's calls past 2^31 (a trace of tens of gigabytes) are left out.
        guard index < Int(Int32.max) else { return }
        let functionsBefore = interner?.functions.count ?? 0
        let converted = profileCall(call, clock: clock)
        if let consumer {
            // Streamed: each new function first, then the call; the columns only count.
            if (interner?.functions.count ?? 0) > functionsBefore {
                for function in functions[functionsBefore...] { consumer.add(function) }
            }
            columns[lastIndex].streamed += 1
            consumer.add(converted, stream: call.stream)
            return
        }
        if converted.preempted > 0 { columns[lastIndex].preemptedTime[Int32(index)] = converted.preempted }
        if let split = converted.split { columns[lastIndex].timeSplits[Int32(index)] = split }
        columns[lastIndex].function.append(converted.function)
        columns[lastIndex].start.append(converted.start)
        columns[lastIndex].total.append(converted.cost)
        columns[lastIndex].overhead.append(converted.overhead)
        columns[lastIndex].depthAndFlags.append(converted.depthAndFlags)
    }

    /// The call as the profile holds it: nanoseconds from the start, its function interned.
    @inline(__always) private func profileCall(_ call: CallRecord, clock: TickClock) -> ProfileCall {
        var flags: ProfileThread.CallFlags = []
        if call.isUnfinished { flags.insert(.unfinished) }
        if call.isUnwound { flags.insert(.unwound) }
        var preempted: Int64 = 0
        let cost = min(clock.duration(ticks: call.ticks(measured: measured)).value, Self.limit)
        var split: TimeSplit?
        if call.durationTicks >= markMinimum {
            if let threadTime {
                // Version 4: the samples say it all, run delay included.
                split = threadTime.split(stream: call.stream, start: call.startTick, end: call.endTick,
                                         cost: Nanoseconds(cost))
                preempted = split?.preempted.value ?? 0
            } else if let preemption {
                preempted = preemption.preempted(call).value
            }
            if preempted > 0 { flags.insert(.preempted) }
            if split != nil { flags.insert(.split) }
        }
        return ProfileCall(
            function: interner?.index(of: call) ?? 0,
            start: Self.clamped((clock.monotonic(tick: call.startTick) - origin).value),
            cost: cost,
            overhead: UInt32(clamping: clock.duration(ticks: call.overheadTicks).value),
            depthAndFlags: min(call.depth, 0xFF_FFFF) | UInt32(flags.rawValue) << 24,
            preempted: max(preempted, 0), split: split)
    }

    func piece(stream: UInt32, tid: UInt64) { consumer?.piece(stream: stream, tid: tid) }

    var functions: [ProfileFunction] { interner?.functions ?? [] }

    /// The function holding `address` (a function's entry, or a return address inside it) when
    /// the moment `tick` came.
    func function(at address: UInt64, tick: Ticks) -> Int {
        Int(interner?.index(ofAddress: address, atTick: tick) ?? 0)
    }

    /// The function holding `address` when `tick` came, without making it one of the profile's
    /// functions (a function muted before any call of it was recorded has none).
    func describe(_ address: UInt64, tick: Ticks) -> ProfileFunction {
        interner?.function(ofAddress: address, atTick: tick) ?? ProfileFunction(name: TextFormat.hex(address))
    }

    func duration(_ ticks: Ticks) -> Nanoseconds { clock?.duration(ticks: ticks) ?? .zero }

    /// Where the time from `start` to `end` ticks went on `stream` (a span's, a hang's quiet time):
    /// all of it counted, nothing taken out as overhead; nil when no sample covers it.
    func split(stream: UInt32, start: Ticks, end: Ticks) -> TimeSplit? {
        guard let threadTime, end.count > start.count else { return nil }
        return threadTime.split(stream: stream, start: start, end: end, cost: duration(Ticks(end.count - start.count)))
    }

    /// The calls of `stream` as a thread, in exit order, with the tree links. `pieces` (the
    /// stream's own, from the reader) put them in the order written when blocks shared with other
    /// threads made them come out of it.
    func thread(stream: UInt32, info: ThreadInfo, isMain: Bool, pieces: [TracePiece]) -> ProfileThread {
        var thread = ProfileThread(tid: info.tid, name: info.name, isMain: isMain)
        thread.states = threadTime?.segments(stream: stream).map {
            ProfileThreadState(start: instant($0.start), end: instant($0.end), state: $0.state)
        } ?? []
        guard let index = indexOf[stream], consumer == nil else { return thread }
        var columns = Columns()
        swap(&columns, &self.columns[index])  // the accumulator lets go of them
        columns = Self.inWrittenOrder(columns, pieces: pieces)
        thread.function = columns.function
        thread.setTimes(start: columns.start, cost: columns.total)
        thread.overhead = columns.overhead
        thread.depthAndFlags = columns.depthAndFlags
        thread.preemptedTime = columns.preemptedTime
        thread.timeSplits = columns.timeSplits
        let links = columns.start.withUnsafeBufferPointer { start in
            thread.depthAndFlags.withUnsafeBufferPointer { depthAndFlags in
                CallTreeBuilder.links(ColumnOrder(start: start, depthAndFlags: depthAndFlags))
            }
        }
        thread.roots = links.roots
        thread.firstChild = links.firstChild
        thread.nextSibling = links.nextSibling
        thread.parent = links.parent
        return thread
    }

    /// The stream's pieces came in the order decoded; put them in the order written (copying only
    /// when they are not already).
    private static func inWrittenOrder(_ columns: Columns, pieces: [TracePiece]) -> Columns {
        // Each piece's calls are contiguous in the stream's columns, pieces in the order decoded.
        let decoded = pieces.sorted { $0.records.lowerBound < $1.records.lowerBound }
        var local: [Range<Int>] = []
        var position = 0
        for piece in decoded {
            local.append(position..<(position + piece.records.count))
            position += piece.records.count
        }
        let order = TracePiece.writtenOrder(decoded)
        guard order != Array(decoded.indices), position == columns.count else { return columns }
        var sorted = Columns()
        for piece in order {
            for old in local[piece] {
                if let time = columns.preemptedTime[Int32(old)] { sorted.preemptedTime[Int32(sorted.count)] = time }
                if let split = columns.timeSplits[Int32(old)] { sorted.timeSplits[Int32(sorted.count)] = split }
                sorted.function.append(columns.function[old])
                sorted.start.append(columns.start[old])
                sorted.total.append(columns.total[old])
                sorted.overhead.append(columns.overhead[old])
                sorted.depthAndFlags.append(columns.depthAndFlags[old])
            }
        }
        return sorted
    }
}

/// The start and depth of a thread's calls, as `CallTreeBuilder` reads them.
struct ColumnOrder: CallTreeOrder {
    let start: UnsafeBufferPointer<Int64>
    let depthAndFlags: UnsafeBufferPointer<UInt32>
    var count: Int { start.count }
    @inline(__always) func start(_ index: Int) -> Int64 { start[index] }
    @inline(__always) func depth(_ index: Int) -> UInt32 { depthAndFlags[index] & 0xFF_FFFF }
}
