/// A moment in a profile: nanoseconds since the traced process started (or, when the trace does not
/// say when it started, since its runtime started). Ticks stay in the format layer; dates (unix
/// time) only where a view shows one (`Profile.unixTime`).
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var sinceStart: Nanoseconds

    public init(sinceStart: Nanoseconds) { self.sinceStart = sinceStart }
    public init(nanoseconds: Int64) { sinceStart = Nanoseconds(nanoseconds) }

    public static let start = Instant(nanoseconds: 0)

    public static func < (a: Instant, b: Instant) -> Bool { a.sinceStart < b.sinceStart }
    public static func - (a: Instant, b: Instant) -> Nanoseconds { a.sinceStart - b.sinceStart }
    public static func + (a: Instant, b: Nanoseconds) -> Instant { Instant(sinceStart: a.sinceStart + b) }

    public var description: String { "+" + sinceStart.description }
}
