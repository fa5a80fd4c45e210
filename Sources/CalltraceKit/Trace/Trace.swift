/// Everything read from one trace file. Times are in ticks; `clock` converts them.
public struct Trace: Sendable {
    public var header: TraceHeader
    public var clock: TickClock
    /// From the PROCESS record; nil if the runtime never wrote it.
    public var process: TracedProcess?
    public var modules: [TraceModule]
    /// One entry per thread stream, main thread first, then by stream id.
    public var threads: [ThreadInfo]
    /// All calls, grouped by stream in `threads` order; within a stream in the order the
    /// calls ended (the order `CallTreeBuilder` needs).
    public var records: [CallRecord]
    /// Where each stream's calls are in `records`.
    public var streamRanges: [UInt32: Range<Int>]
    /// Problems met while reading (damage, truncation, an unclean exit, drops), one line each.
    public var warnings: [String]
    /// Calls read per stream, including those `TraceReader.Options` left out of `records`.
    public var callCounts: [UInt32: Int] = [:]
    public var callCount: Int { callCounts.values.reduce(0, +) }
    /// RUN_DELAY records: when each thread waited for a CPU (`Preemption` attributes them to calls).
    public var runDelays: [RunDelay] = []
    /// The trace was not closed because its program is still running (not because it was killed).
    public var isStillRunning = false
    /// Functions the runtime stopped timing (adaptive muting), in the order they were muted.
    public var muted: [MutedFunction] = []
    /// Each stream's pieces (blocks, segments): which of the kept calls, in the order decoded, are
    /// whose (for a reader that handed them to a sink rather than to `records`).
    var pieces: [TracePiece] = []
    /// MARK records, in time order (the order of their ticks; marks on one tick keep the order
    /// they were written in).
    public var marks: [TraceMark] = []
    /// FRAME records of every thread, in time order.
    public var frames: [TraceFrame] = []
    /// HANG records: the main thread's native stack in each hang, in the order captured.
    public var hangs: [TraceHang] = []
    /// The stored symbol table (`calltrace symbolize`), when the trace has a sound one; each
    /// module's part is its `storedSymbols`.
    public var storedSymbols: StoredSymbolsSummary?

    public init(header: TraceHeader, process: TracedProcess?, modules: [TraceModule],
                threads: [ThreadInfo], records: [CallRecord], streamRanges: [UInt32: Range<Int>],
                warnings: [String]) {
        self.header = header
        self.clock = TickClock(header: header)
        self.process = process
        self.modules = modules
        self.threads = threads
        self.records = records
        self.streamRanges = streamRanges
        self.warnings = warnings
    }

    public func records(ofStream stream: UInt32) -> ArraySlice<CallRecord> {
        guard let range = streamRanges[stream] else { return [] }
        return records[range]
    }

    /// The thread whose tid is the process id, if it was traced.
    public var mainThread: ThreadInfo? { threads.first { $0.tid == header.pid } }
}
