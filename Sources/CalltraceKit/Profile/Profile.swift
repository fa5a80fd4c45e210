/// A trace, symbolicated once, in the shape every view and export reads: interned functions,
/// each thread's calls as columns with total and self time and tree links, the process and its
/// life, warnings. Built by `ProfileBuilder`; views never see ticks or addresses.
public struct Profile: Sendable {
    /// The trace file it was read from ("" for one built in memory).
    public var source: String
    public var pid: UInt64
    /// Executable path and command line, when the trace has them.
    public var program: String
    public var arguments: [String]
    /// The threshold the program was recorded with.
    public var threshold: Nanoseconds
    /// Totals are measured durations, instrumentation overhead included (`report --raw`).
    public var measured: Bool
    public var functions: [ProfileFunction]
    /// Main thread first, then in the order their streams began.
    public var threads: [ProfileThread]
    /// Problems met reading the trace, one line each.
    public var warnings: [String]
    /// Functions the runtime stopped timing (adaptive muting): their time is in their callers.
    public var mutedCount: Int
    /// The functions the runtime muted (MUTED records), in the order muted.
    public var muted: [ProfileMutedFunction] = []
    /// The compiler of the code those functions are in (gcc when any is gcc's; nil: none muted),
    /// read from the modules' files: gcc's code keeps part of its instrumentation's cost after muting.
    public var mutedCodeCompiler: BuildCompiler?
    /// The trace says when the process started (else `Instant.start` is the runtime's start).
    public var processStartKnown: Bool
    public var runtimeStarted: Instant
    /// When `main` was entered, if the trace says.
    public var mainEntered: Instant?
    /// When the program ended (exit, crash), if it did before the trace was read.
    public var ended: Instant?
    public var exit: Exit
    /// Unix time of `Instant.start`, for views that show dates.
    public var unixTimeAtStart: Nanoseconds
    /// Marks, by time.
    public var marks: [ProfileMark] = []
    /// Frame starts (`calltrace_frame`), by time, of the thread that marked the most (`frameThread`).
    public var frames: [Instant] = []
    public var frameThread: UInt64?
    /// The target frame interval the program was recorded with (`CALLTRACE_FRAME`).
    public var frameInterval = Nanoseconds(16_666_667)
    /// Spans (`calltrace_span_begin`), by begin time.
    public var spans: [ProfileSpan] = []
    /// Hangs of the main thread with their native stacks, by time (`CALLTRACE_HANG`).
    public var hangs: [ProfileHang] = []
    /// What CALLTRACE_FILTER chose to record (nil: no filter).
    public var filter: TraceFilter?
    /// A flight recorder's trace: the time its calls cover and what was overwritten.
    public var flightRecorder: FlightRecording?
    /// The hang threshold it was recorded with (zero: hangs were not watched).
    public var hangThreshold = Nanoseconds.zero

    public enum Exit: Equatable, Sendable {
        case clean
        case crashed(signal: Int)
        case stillRunning
        /// Killed, or its runtime never closed the trace.
        case unknown
    }

    public init(source: String = "", pid: UInt64 = 0, program: String = "", arguments: [String] = [],
                threshold: Nanoseconds = .zero, measured: Bool = false, functions: [ProfileFunction] = [],
                threads: [ProfileThread] = [], warnings: [String] = [], mutedCount: Int = 0,
                processStartKnown: Bool = false, runtimeStarted: Instant = .start, mainEntered: Instant? = nil,
                ended: Instant? = nil, exit: Exit = .unknown, unixTimeAtStart: Nanoseconds = .zero) {
        self.source = source
        self.pid = pid
        self.program = program
        self.arguments = arguments
        self.threshold = threshold
        self.measured = measured
        self.functions = functions
        self.threads = threads
        self.warnings = warnings
        self.mutedCount = mutedCount
        self.processStartKnown = processStartKnown
        self.runtimeStarted = runtimeStarted
        self.mainEntered = mainEntered
        self.ended = ended
        self.exit = exit
        self.unixTimeAtStart = unixTimeAtStart
    }

    public var mainThread: ProfileThread? { threads.first { $0.isMain } }
    public var callCount: Int { threads.reduce(0) { $0 + $1.count } }

    /// Unix time of `instant`.
    public func unixTime(_ instant: Instant) -> Nanoseconds { unixTimeAtStart + instant.sinceStart }

    /// The program's file name, for headings.
    public var programName: String {
        let name = program.split(separator: "/").last.map(String.init) ?? program
        return name.isEmpty ? "pid \(pid)" : name
    }
}
