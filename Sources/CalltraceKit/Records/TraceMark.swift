/// A named point in the program's time: a MARK record (`calltrace_mark`, `calltrace_mark_extra`;
/// docs/trace-format.md). Marks come from any thread, also before the trace opened (a constructor)
/// and from threads that do not record.
public struct TraceMark: Hashable, Sendable {
    /// When the program called `calltrace_mark`.
    public var tick: Ticks
    /// The kernel id of the thread that called it.
    public var tid: UInt64
    /// That thread's stream when it was recording at the time; 0 when it was not (yet).
    public var stream: UInt32
    /// The name, cut by the runtime to 127 bytes; empty for a NULL name.
    public var name: String
    /// `calltrace_mark_extra`'s text, cut to 255 bytes; empty when there is none.
    public var extra: String

    /// Decodes a MARK record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let (stream, tid, tick) = try body.readMarkPrefix()
        let (name, extra) = try body.read(String.self, String.self)
        self.init(tick: tick, tid: tid, stream: stream, name: name, extra: extra)
    }

    /// Decodes a MARK_AT record's body: the mark, and the CLOCK_MONOTONIC time the program gave
    /// (`TraceReader` turns it into the mark's tick with the header's calibration).
    static func decodeAt(from body: inout ByteCursor) throws -> (mark: TraceMark, monotonicNs: UInt64) {
        let (stream, tid, tick) = try body.readMarkPrefix()
        let (monotonic, name, extra) = try body.read(UInt64.self, String.self, String.self)
        return (TraceMark(tick: tick, tid: tid, stream: stream, name: name, extra: extra), monotonic)
    }

    public init(tick: Ticks, tid: UInt64, stream: UInt32, name: String, extra: String = "") {
        self.tick = tick
        self.tid = tid
        self.stream = stream
        self.name = name
        self.extra = extra
    }
}

extension ByteCursor {
    /// What MARK, MARK_AT, FRAME and SPAN_* records start with: the thread's stream (0: not
    /// recording), its tid, the tick.
    mutating func readMarkPrefix() throws -> (stream: UInt32, tid: UInt64, tick: Ticks) {
        let (stream, tid, tick) = try read(UInt64.self, UInt64.self, Ticks.self)
        guard let stream32 = UInt32(exactly: stream) else { throw RecordError.badStream(stream) }
        return (stream32, tid, tick)
    }
}
