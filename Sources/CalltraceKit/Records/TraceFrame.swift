/// The start of one frame of the program's render or event loop: a FRAME record
/// (`calltrace_frame`; docs/trace-format.md). A frame lasts until the next one on its thread; the
/// target interval is the header's `frameIntervalNs` (`CALLTRACE_FRAME`).
public struct TraceFrame: Equatable, Sendable {
    /// When the program called `calltrace_frame`.
    public var tick: Ticks
    /// The kernel id of the thread that called it.
    public var tid: UInt64
    /// That thread's stream when it was recording at the time; 0 when it was not (yet).
    public var stream: UInt32

    /// Decodes a FRAME record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let (stream, tid, tick) = try body.readMarkPrefix()
        self.init(tick: tick, tid: tid, stream: stream)
    }

    public init(tick: Ticks, tid: UInt64, stream: UInt32) {
        self.tick = tick
        self.tid = tid
        self.stream = stream
    }
}
