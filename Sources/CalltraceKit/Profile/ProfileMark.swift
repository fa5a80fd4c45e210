/// A point the program named with `calltrace_mark` / `calltrace_mark_extra`.
public struct ProfileMark: Equatable, Sendable {
    public var name: String
    /// The extra text of `calltrace_mark_extra` ("" for a plain mark).
    public var extra: String
    public var at: Instant
    /// The thread that made the mark.
    public var tid: UInt64

    public init(name: String, extra: String = "", at: Instant, tid: UInt64) {
        self.name = name
        self.extra = extra
        self.at = at
        self.tid = tid
    }
}
