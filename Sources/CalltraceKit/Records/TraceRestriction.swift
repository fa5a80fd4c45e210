/// A RESTRICTED record: a thread of the program restricted itself (seccomp, `PR_SET_TSC`), and
/// what the runtime did about it (docs/design.md "Programs that restrict themselves").
public struct TraceRestriction: Equatable, Sendable {
    /// The program's step (`CT_RESTRICT_*` in ct_format.h).
    public enum Step: Equatable, Sendable {
        case seccompStrict, seccompFilter, seccompFilterOnAllThreads, tscForbidden
        case other(UInt64)

        init(_ code: UInt64) {
            switch code {
            case TraceFormat.Restriction.strict: self = .seccompStrict
            case TraceFormat.Restriction.filter: self = .seccompFilter
            case TraceFormat.Restriction.filterAll: self = .seccompFilterOnAllThreads
            case TraceFormat.Restriction.tsc: self = .tscForbidden
            default: self = .other(code)
            }
        }

        public var text: String {
            switch self {
            case .seccompStrict: return "seccomp strict mode"
            case .seccompFilter: return "a seccomp filter"
            case .seccompFilterOnAllThreads: return "a seccomp filter on every thread"
            case .tscForbidden: return "PR_SET_TSC forbade rdtsc"
            case .other(let code): return "restriction \(code)"
            }
        }
    }

    /// The runtime's answer (`CT_RESTRICT_TIMED_ON`...).
    public enum Answer: Equatable, Sendable {
        case timedOn, clockSystemCall, stopped, stoppedEverywhere
        case other(UInt64)

        init(_ code: UInt64) {
            switch code {
            case TraceFormat.Restriction.timedOn: self = .timedOn
            case TraceFormat.Restriction.clockCall: self = .clockSystemCall
            case TraceFormat.Restriction.stopped: self = .stopped
            case TraceFormat.Restriction.stoppedAll: self = .stoppedEverywhere
            default: self = .other(code)
            }
        }

        public var text: String {
            switch self {
            case .timedOn: return "timed on (the filter allows what the runtime does)"
            case .clockSystemCall: return "timed on with the clock's system call"
            case .stopped: return "its calls no longer timed"
            case .stoppedEverywhere: return "no thread timed any more"
            case .other(let code): return "answer \(code)"
            }
        }

        /// Calls made after the step were not timed (on that thread, or on all).
        public var stopsTiming: Bool { self == .stopped || self == .stoppedEverywhere }
    }

    public var stream: UInt32
    public var tid: UInt64
    public var tick: Ticks
    public var step: Step
    public var answer: Answer

    /// Decodes a RESTRICTED record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let (stream, tid, tick, step, answer) = try body.read(UInt64.self, UInt64.self, Ticks.self, UInt64.self,
                                                               UInt64.self)
        guard let stream32 = UInt32(exactly: stream) else { throw RecordError.badStream(stream) }
        self.init(stream: stream32, tid: tid, tick: tick, step: .init(step), answer: .init(answer))
    }

    public init(stream: UInt32, tid: UInt64, tick: Ticks, step: Step, answer: Answer) {
        self.stream = stream
        self.tid = tid
        self.tick = tick
        self.step = step
        self.answer = answer
    }

    /// When, as the info's times say it: since the process started (or the runtime's start).
    func whenText(_ header: TraceHeader, clock: TickClock) -> String {
        let at = clock.monotonic(tick: tick)
        if header.processStartNs > 0 {
            return TextFormat.milliseconds(at - Nanoseconds(Int64(clamping: header.processStartNs))) + " ms"
        }
        return TextFormat.milliseconds(at - clock.monotonic(tick: header.initTick)) + " ms after the runtime started"
    }

    /// The info's row: "thread 4242 at 12.30 ms: seccomp strict mode; its calls no longer timed".
    func text(_ header: TraceHeader, clock: TickClock) -> String {
        "thread \(tid) at \(whenText(header, clock: clock)): \(step.text); \(answer.text)"
    }

    /// The reader's warning, for an answer that stopped timing; nil otherwise.
    func warning(_ header: TraceHeader, clock: TickClock) -> String? {
        guard answer.stopsTiming else { return nil }
        let whose = answer == .stoppedEverywhere ? "no thread's calls were" : "its calls were not"
        return "thread \(tid) restricted itself at \(whenText(header, clock: clock)) (\(step.text)): \(whose) timed "
            + "from then on, and those open then are shown unfinished, with their cost up to that moment"
    }
}
