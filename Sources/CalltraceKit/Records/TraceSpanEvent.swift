/// One event of a span the program named (`calltrace_span_begin`, `calltrace_span_point`,
/// `calltrace_span_end`): a SPAN_BEGIN, SPAN_POINT or SPAN_END record (docs/trace-format.md). The
/// reader keeps them as written; `ProfileBuilder` pairs them by `id` into `ProfileSpan`s.
public struct TraceSpanEvent: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// The span begins; `name` and `extra` are its.
        case begin
        /// A milestone named `name`.
        case point
        case end
    }

    public var kind: Kind
    /// The span's id, unique in its process (never 0).
    public var id: UInt64
    public var tick: Ticks
    /// The kernel id of the thread that called.
    public var tid: UInt64
    /// That thread's stream when it was recording at the time; 0 when it was not (yet).
    public var stream: UInt32
    /// The span's name (begin) or the milestone's (point), cut by the runtime to 127 bytes.
    public var name: String
    /// The begin's extra text, cut to 255 bytes; empty when there is none.
    public var extra: String

    /// Decodes the body of a SPAN_BEGIN, SPAN_POINT or SPAN_END record (`tag`; docs/trace-format.md).
    init(tag: UInt8, from body: inout ByteCursor) throws {
        let (stream, tid, tick) = try body.readMarkPrefix()
        let id = try body.readVarint()
        self.init(kind: .end, id: id, tick: tick, tid: tid, stream: stream)
        if tag == TraceFormat.Tag.spanBegin {
            kind = .begin
            (name, extra) = try body.read(String.self, String.self)
        } else if tag == TraceFormat.Tag.spanPoint {
            kind = .point
            name = try body.readString()
        }
    }

    public init(kind: Kind, id: UInt64, tick: Ticks, tid: UInt64, stream: UInt32, name: String = "", extra: String = "") {
        self.kind = kind
        self.id = id
        self.tick = tick
        self.tid = tid
        self.stream = stream
        self.name = name
        self.extra = extra
    }
}
