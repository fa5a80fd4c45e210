/// Everything read from one trace file but its calls, which the reader hands to a sink as it
/// decodes them (`ProfileBuilder` turns them into a `Profile`); here they are only counted.
/// Times are in ticks; `clock` converts them.
public struct Trace: Sendable {
    public var header: TraceHeader
    public var clock: TickClock
    /// From the PROCESS record; nil if the runtime never wrote it.
    public var process: TracedProcess?
    public var modules: [TraceModule]
    /// One entry per thread stream, main thread first, then by stream id.
    public var threads: [ThreadInfo]
    /// Problems met while reading (damage, truncation, an unclean exit, drops), one line each.
    public var warnings: [String]
    /// Calls read per stream, including those `TraceReader.Options` did not keep.
    public var callCounts: [UInt32: Int] = [:]
    public var callCount: Int { callCounts.values.reduce(0, +) }
    /// RUN_DELAY records: when each thread waited for a CPU (`Preemption` attributes them to calls).
    public var runDelays: [RunDelay] = []
    /// THREAD_STATE records: samples of each thread's time on a CPU, run delay and state
    /// (`ThreadTime` attributes them to calls).
    public var threadStates: [ThreadStateSample] = []
    /// The trace was not closed because its program is still running (not because it was killed).
    public var isStillRunning = false
    /// Functions the runtime stopped timing (adaptive muting), in the order they were muted.
    public var muted: [MutedFunction] = []
    /// Each stream's pieces (blocks, segments): which of the kept calls, in the order the reader
    /// handed them to its sink, are whose.
    var pieces: [TracePiece] = []
    /// MARK records, in time order (the order of their ticks; marks on one tick keep the order
    /// they were written in).
    public var marks: [TraceMark] = []
    /// FRAME records of every thread, in time order.
    public var frames: [TraceFrame] = []
    /// SPAN_BEGIN, SPAN_POINT and SPAN_END records of every thread, in time order (events on one
    /// tick keep the order they were written in).
    public var spanEvents: [TraceSpanEvent] = []
    /// HANG records: the main thread's native stack in each hang, in the order captured.
    public var hangs: [TraceHang] = []
    /// The FILTER record: what CALLTRACE_FILTER chose to record (nil: no filter).
    public var filter: TraceFilter?
    /// RESTRICTED records: threads that restricted themselves, in the order written.
    public var restrictions: [TraceRestriction] = []
    /// What a flight recorder's trace (CALLTRACE_LIMIT) covers and gave up (nil: no limit).
    public var flightRecorder: FlightRecording?
    /// The stored symbol table (`calltrace symbolize`), when the trace has a sound one; each
    /// module's part is its `storedSymbols`.
    public var storedSymbols: StoredSymbolsSummary?

    public init(header: TraceHeader, process: TracedProcess?, modules: [TraceModule],
                threads: [ThreadInfo], warnings: [String]) {
        self.header = header
        self.clock = TickClock(header: header)
        self.process = process
        self.modules = modules
        self.threads = threads
        self.warnings = warnings
    }

    /// The thread whose tid is the process id, if it was traced.
    public var mainThread: ThreadInfo? { threads.first { $0.tid == header.pid } }
}
