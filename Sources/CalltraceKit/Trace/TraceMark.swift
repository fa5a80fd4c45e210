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

    public init(tick: Ticks, tid: UInt64, stream: UInt32, name: String, extra: String = "") {
        self.tick = tick
        self.tid = tid
        self.stream = stream
        self.name = name
        self.extra = extra
    }
}
