/// One recorded call, as compact as the trace allows: 48 bytes, so ten million records take
/// 480 MB. Times stay in ticks; `TickClock` converts them. Depth and flags share one word: the
/// runtime's stack holds at most 2^22 calls (`CALLTRACE_MAX_DEPTH`), so 24 bits of depth suffice.
public struct CallRecord: Equatable, Sendable {
    /// Function address (from `__cyg_profile_func_enter`).
    public var function: UInt64
    /// Return address in the caller.
    public var callSite: UInt64
    public var startTick: Ticks
    /// The measured duration, hooks included: start and end place the call in time.
    public var durationTicks: Ticks
    /// The part of `durationTicks` that was instrumentation overhead: the record's count of timed
    /// descendants times the header's calibrated cost per call, plus the call's own share.
    public var overheadTicks: Ticks
    /// The stream (thread) the record came from.
    public var stream: UInt32
    /// Depth in the low 24 bits, the CALL tag's flag bits in the high 8.
    private var depthAndFlags: UInt32

    public static let maxDepth: UInt32 = (1 << 24) - 1
    public static let unfinishedFlag = TraceFormat.CallFlag.unfinished
    public static let unwoundFlag = TraceFormat.CallFlag.unwound

    /// `depth` above `maxDepth` is clamped; `TraceReader` rejects such records as damaged.
    public init(function: UInt64, callSite: UInt64, startTick: Ticks, durationTicks: Ticks,
                depth: UInt32, stream: UInt32, flags: UInt8 = 0, overheadTicks: Ticks = .zero) {
        self.function = function
        self.callSite = callSite
        self.startTick = startTick
        self.durationTicks = durationTicks
        self.overheadTicks = min(overheadTicks, durationTicks)
        self.stream = stream
        self.depthAndFlags = min(depth, CallRecord.maxDepth) | UInt32(flags) << 24
    }

    /// Depth on the thread's stack, 0 = outermost.
    public var depth: UInt32 { depthAndFlags & CallRecord.maxDepth }
    /// The CALL tag's flag bits (bit 4 unfinished, bit 5 unwound).
    public var flags: UInt8 { UInt8(truncatingIfNeeded: depthAndFlags >> 24) }
    public var endTick: Ticks { startTick &+ durationTicks }
    /// What the call cost the program: the measured duration without the hooks' overhead.
    public var costTicks: Ticks { durationTicks &- overheadTicks }
    /// The cost, or the measured duration when `measured` (`report --raw`).
    public func ticks(measured: Bool) -> Ticks { measured ? durationTicks : costTicks }
    public var isUnfinished: Bool { flags & CallRecord.unfinishedFlag != 0 }
    public var isUnwound: Bool { flags & CallRecord.unwoundFlag != 0 }
}
