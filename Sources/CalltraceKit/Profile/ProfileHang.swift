/// A hang of the main thread (`CALLTRACE_HANG`): the call it was stuck in and its whole native
/// stack at the moment, uninstrumented frames included.
public struct ProfileHang: Sendable {
    /// When the stack was captured.
    public var at: Instant
    /// How long the thread had been without hook activity then.
    public var quiet: Nanoseconds
    public var tid: UInt64
    /// The innermost open instrumented call: its function, start and depth.
    public var function: Int
    public var callStart: Instant
    public var depth: UInt32
    /// The native stack, innermost first, as functions (a frame in no known function is named by
    /// its address).
    public var stack: [Int]
    /// Taken without a signal (the wait would have been cut short): the stack holds the
    /// instrumented calls only, under the system call's address.
    public var isPartial: Bool
    /// Where the quiet time before the capture went (what the thread was blocked in); nil when the
    /// thread was not sampled then.
    public var split: TimeSplit?

    public init(at: Instant, quiet: Nanoseconds, tid: UInt64, function: Int, callStart: Instant, depth: UInt32,
                stack: [Int], isPartial: Bool) {
        self.at = at
        self.quiet = quiet
        self.tid = tid
        self.function = function
        self.callStart = callStart
        self.depth = depth
        self.stack = stack
        self.isPartial = isPartial
    }
}
