/// An interval the program named (`calltrace_span_begin` ... `calltrace_span_end`), with the
/// milestones it gave inside it (`calltrace_span_point`). It may end on another thread than the one
/// that began it; one still open when the trace ends is unfinished (`end` nil).
public struct ProfileSpan: Sendable {
    public struct Milestone: Equatable, Sendable {
        public var name: String
        public var at: Instant
        public var tid: UInt64

        public init(name: String, at: Instant, tid: UInt64) {
            self.name = name
            self.at = at
            self.tid = tid
        }
    }

    public var name: String
    /// The extra text given at its begin ("" for none).
    public var extra: String
    public var begin: Instant
    /// When it ended; nil: it never did (unfinished at exit, or the trace was read while it ran).
    public var end: Instant?
    /// The threads it began and ended on (`endTid` nil when it never ended).
    public var beginTid: UInt64
    public var endTid: UInt64?
    /// In time order.
    public var milestones: [Milestone]
    /// Where its time went on its thread (`ThreadTime`): for a span that began and ended on one
    /// sampled thread; nil otherwise.
    public var split: TimeSplit?

    public init(name: String, extra: String = "", begin: Instant, end: Instant?, beginTid: UInt64, endTid: UInt64?,
                milestones: [Milestone] = []) {
        self.name = name
        self.extra = extra
        self.begin = begin
        self.end = end
        self.beginTid = beginTid
        self.endTid = endTid
        self.milestones = milestones
    }

    public var isUnfinished: Bool { end == nil }
    /// How long it lasted; nil when unfinished.
    public var duration: Nanoseconds? { end.map { $0 - begin } }
}

extension Profile {
    /// The spans open at some moment of [from, to], in the profile's order: `hitches` and `hangs`
    /// name them. An unfinished span counts as open until the trace ended (or, when the trace
    /// does not say, from its begin on).
    public func spans(overlapping from: Instant, _ to: Instant) -> [ProfileSpan] {
        spans.filter { span in
            guard span.begin <= to else { return false }
            guard let end = span.end ?? ended else { return true }
            return end >= from
        }
    }
}
