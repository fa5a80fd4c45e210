/// One call as the profile holds it, handed to a `ProfileCallConsumer` as it is read: the columns
/// of `ProfileThread` for one call, made by the one conversion (`ProfileAccumulator`).
public struct ProfileCall {
    /// Index into the profile's functions.
    public var function: Int32
    /// Nanoseconds since the profile's start.
    public var start: Int64
    /// The cost (the measured duration with `measured`), nanoseconds.
    public var cost: Int64
    /// The instrumentation overhead taken out, nanoseconds.
    public var overhead: UInt32
    /// Depth in the low 24 bits, `ProfileThread.CallFlags` in the high 8.
    public var depthAndFlags: UInt32
    /// The estimated time the thread waited for a CPU during the call, nanoseconds (0: none).
    public var preempted: Int64
    /// Where its cost went (calls of a millisecond or more in a trace whose threads were sampled).
    public var split: TimeSplit?

    public var depth: UInt32 { depthAndFlags & 0xFF_FFFF }
    public var flags: ProfileThread.CallFlags { ProfileThread.CallFlags(rawValue: UInt8(depthAndFlags >> 24)) }
    /// As `ProfileThread.preempted`: never more than the cost.
    public var preemptedTime: Nanoseconds { Nanoseconds(min(preempted, cost)) }
}

/// Takes a trace's calls as they are read, in the order they ended on each thread, instead of a
/// profile holding them (`ProfileBuilder.stream`): formats written call by call keep flat memory.
public protocol ProfileCallConsumer: AnyObject {
    /// Before the first call: what the calls' times are measured from, and the recording threshold.
    func begin(unixTimeAtStart: Nanoseconds, measured: Bool, threshold: Nanoseconds)
    /// A function the next calls may use, in the order of the profile's function indexes.
    func add(_ function: ProfileFunction)
    /// The calls that follow are `stream`'s, on thread `tid` as far as the trace has said so far
    /// (the `Trace` read, `Trace.threads`, has the thread it names in the end).
    func piece(stream: UInt32, tid: UInt64)
    /// A call of `stream`, each stream's calls in the order decoded (the `Trace` read says whether
    /// that was the order written: its pieces).
    func add(_ call: ProfileCall, stream: UInt32)
}
