/// Where a call's cost went (docs/design.md, "Why a call was slow"): on a CPU, runnable but
/// waiting for one (preempted), or blocked, and blocked in what. The four parts add up to the
/// call's cost; `unknown` is the part no sample of its thread covered (the first milliseconds of a
/// thread, the last before the trace closed).
public struct TimeSplit: Equatable, Sendable {
    public var cpu: Nanoseconds
    public var preempted: Nanoseconds
    public var blocked: Nanoseconds
    public var unknown: Nanoseconds
    /// What the blocked time was spent in, largest first (together, `blocked`).
    public var blockedOn: [BlockedOn]

    public struct BlockedOn: Equatable, Sendable {
        /// As a user thinks of it: "read /etc/app.conf", "read pipe", "futex config_lock",
        /// "nanosleep", "page fault"; "unknown" when it could not be read or fell between samples.
        public var what: String
        public var time: Nanoseconds

        public init(what: String, time: Nanoseconds) {
            self.what = what
            self.time = time
        }
    }

    public init(cpu: Nanoseconds, preempted: Nanoseconds, blocked: Nanoseconds, unknown: Nanoseconds,
                blockedOn: [BlockedOn]) {
        self.cpu = cpu
        self.preempted = preempted
        self.blocked = blocked
        self.unknown = unknown
        self.blockedOn = blockedOn
    }

    /// The split is stated to within this much (docs/design.md): 2 ms or 10 % of the cost,
    /// whichever is larger.
    public static func precision(cost: Nanoseconds) -> Nanoseconds {
        Nanoseconds(max(2_000_000, cost.value / 10))
    }

    /// A call is marked `(blocked X ms: what)` when it was blocked at least this long...
    public static let markMinimum = Nanoseconds(1_000_000)

    /// ...and for at least a quarter of its cost.
    public func isBlockedMarked(cost: Nanoseconds) -> Bool {
        blocked >= Self.markMinimum && blocked.value >= cost.value / 4
    }

    /// ` (blocked 38.00 ms: read /etc/app.conf)` when a call of `cost` is marked
    /// (`isBlockedMarked`), else "": what `report`'s tree, `hitches` and `hangs` append to a call.
    public func blockedMark(cost: Nanoseconds) -> String {
        isBlockedMarked(cost: cost) ? " (blocked \(TextFormat.milliseconds(blocked)) ms: \(blockedSummary))" : ""
    }

    /// Everything it was blocked in with its time, largest first ("read pipe 30.00 ms, futex 8.00 ms";
    /// "" when never blocked): the exports' `blocked_on`.
    public var blockedOnText: String {
        blockedOn.map { "\($0.what) \(TextFormat.milliseconds($0.time)) ms" }.joined(separator: ", ")
    }

    /// "read /etc/app.conf" or, when it was blocked in several things, the two largest with their
    /// times ("read pipe 30.0 ms, nanosleep 8.0 ms").
    public var blockedSummary: String {
        let named = blockedOn.filter { $0.time >= Self.markMinimum }
        guard named.count > 1 else { return (named.first ?? blockedOn.first)?.what ?? "unknown" }
        var parts = named.prefix(2).map { "\($0.what) \(TextFormat.milliseconds($0.time)) ms" }
        if named.count > 2 { parts.append("\(named.count - 2) more") }
        return parts.joined(separator: ", ")
    }
}
