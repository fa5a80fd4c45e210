/// A view or export: one small type that renders profiles in one format for one command. Every
/// view is listed in `ViewRegistry`, which drives each command's `--format` choices, the trace
/// reader's fuzz target and the robustness tests. A view that can also be made while the trace is
/// read says so with `stream` (`ViewStream`).
public protocol ProfileView {
    /// The command that shows it (`calltrace report`, `calltrace top`, ...).
    static var command: ViewCommand { get }
    /// Its `--format` name; the first view registered for a command is its default.
    static var format: String { get }
    /// The flag that asks for it instead of `--format` (`flame --diff`); nil for a `--format` choice.
    static var flag: String? { get }
    /// One line for `--help`.
    static var summary: String { get }
    /// Reads source files and lines from DWARF (slower: opens debug information).
    static var needsLines: Bool { get }
    /// Writes bytes that are not text (never to a terminal).
    static var isBinary: Bool { get }
    static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput)
    /// A stream that makes the view while the trace is read (`ViewStream`); nil (the default) for
    /// a view rendered from a whole profile only, or when no stream can be had (no temporary file).
    static func stream(options: ViewOptions) -> (any ViewStream)?
}

extension ProfileView {
    public static var flag: String? { nil }
    public static var needsLines: Bool { false }
    public static var isBinary: Bool { false }

    /// The whole output as one string (tests, small profiles).
    public static func text(_ input: ViewInput, options: ViewOptions = ViewOptions()) -> String {
        ByteOutput.text { render(input, options: options, to: $0) }
    }
}

public enum ViewCommand: String, CaseIterable, Sendable {
    case report, timeline, top, spans, hitches, hangs, diff, export, flame, info
}

/// What a view reads: the profiles named on the command line (for `diff`, the new ones) and, for
/// `diff`, the baseline; for `info`, the traces they were read from.
public struct ViewInput {
    public var profiles: [Profile]
    public var traces: [Trace]
    public var baseline: [Profile]
    /// `top` and `diff`: the statistics of `profiles` and `baseline`, when the command built them
    /// run by run instead of keeping every profile (views build them from the profiles otherwise).
    public var statistics: FunctionStatistics?
    public var baselineStatistics: FunctionStatistics?
    /// `spans`: the span statistics of `profiles`, when the command built them run by run.
    public var spanStatistics: SpanStatistics?
    /// `flame --diff`: `profiles` and `baseline` merged by stack, when the command built it run by
    /// run instead of keeping every profile (the view builds it from the profiles otherwise).
    public var diffFlameGraph: DiffFlameGraph?

    public init(_ profiles: [Profile], baseline: [Profile] = [], statistics: FunctionStatistics? = nil,
                baselineStatistics: FunctionStatistics? = nil, spanStatistics: SpanStatistics? = nil,
                diffFlameGraph: DiffFlameGraph? = nil,
                traces: [Trace] = []) {
        self.profiles = profiles
        self.spanStatistics = spanStatistics
        self.traces = traces
        self.baseline = baseline
        self.statistics = statistics
        self.baselineStatistics = baselineStatistics
        self.diffFlameGraph = diffFlameGraph
    }

    /// `statistics`, or those of `profiles`.
    public var functionStatistics: FunctionStatistics { statistics ?? FunctionStatistics(profiles) }
    public var baselineFunctionStatistics: FunctionStatistics { baselineStatistics ?? FunctionStatistics(baseline) }
    /// `spanStatistics`, or those of `profiles`, keeping `limit` slowest spans a name (0: 5).
    public func spanStatistics(limit: Int) -> SpanStatistics {
        spanStatistics ?? SpanStatistics(profiles, limit: limit > 0 ? limit : 5)
    }
}

/// Every view's settings; each view reads those of its command.
public struct ViewOptions: Sendable {
    /// Calls that cost less are left out (`--threshold`); their shown descendants move up.
    public var minimumCost: Nanoseconds = .zero
    /// Leave out calls that reached the threshold only because their thread waited for a CPU.
    public var hidePreempted = false
    /// ANSI colours for a terminal (`report`'s tree; the CLI decides: a terminal, no NO_COLOR).
    public var colour = false
    /// `report`: a self-time column.
    public var showSelf = false
    /// `report`: a chain of calls each taking nearly all of its parent's time is one line.
    public var collapse = false
    /// `report` (tree): each name followed by the source file and line of the function's entry
    /// (`--lines`); the profile must have been read with lines.
    public var lines = false
    /// `timeline`: the mark that ends phase T2 (`--ready`).
    public var readyMark: String?
    /// `top`: the order of the rows.
    public var sort: TopSort = .total
    /// How many rows or hitches to list (`top --limit`, `hitches --worst`, `spans --worst`); 0 for all
    /// (`spans`: 5).
    public var limit = 0
    /// `hitches`: the target frame interval, overriding the one recorded.
    public var frameInterval: Nanoseconds?
    /// `diff`: changes smaller than this share of the base (and than `noiseFloor`) are noise, with
    /// one run a side; with several, changes whose Mann-Whitney p-value is `alpha` or more are.
    public var noiseShare = 0.05
    public var noiseFloor = Nanoseconds(100_000)
    public var alpha = 0.05
    /// `diff`: list unchanged functions too (`--all`).
    public var showUnchanged = false
    /// `export --format otlp`: the resource's `host.name` (nil: left out; traces do not record
    /// their host) and calltrace's version for the instrumentation scope.
    public var hostName: String?
    public var version = ""

    public init() {}
}

public enum TopSort: String, CaseIterable, Sendable {
    case total, cpu, `self`, calls, mean, p50, p90, p95, p99, max, name
}
