/// A RUN_DELAY record: between two samples of a thread's scheduler statistics, taken at
/// `startTick` and `endTick`, the time it had spent runnable but waiting for a CPU grew by `delay`.
/// The kernel counts a wait when it ends, so that is the waiting that ended in the interval; it may
/// have begun before (docs/design.md, "Why a call was slow"). Version 3 traces only.
public struct RunDelay: Equatable, Sendable {
    public var stream: UInt32
    public var tid: UInt64
    public var startTick: Ticks
    public var lengthTicks: Ticks
    public var delay: Nanoseconds

    /// Decodes a RUN_DELAY record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let (stream, tid, start, length, delay) = try body.read(UInt64.self, UInt64.self, Ticks.self, Ticks.self,
                                                                 UInt64.self)
        guard let stream32 = UInt32(exactly: stream), !TraceFormat.isRuntimeStream(stream32) else {
            throw RecordError.badStream(stream)
        }
        self.init(stream: stream32, tid: tid, startTick: start, lengthTicks: length,
                  delay: Nanoseconds(Int64(clamping: delay)))
    }

    public init(stream: UInt32, tid: UInt64, startTick: Ticks, lengthTicks: Ticks, delay: Nanoseconds) {
        self.stream = stream
        self.tid = tid
        self.startTick = startTick
        self.lengthTicks = lengthTicks
        self.delay = delay
    }

    public var endTick: Ticks { startTick &+ lengthTicks }
}
