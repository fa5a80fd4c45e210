/// A span of time in nanoseconds from a monotonic clock. The profile's times are in this unit
/// (`Instant`s for points; the trace format's raw clock values are `Ticks`, which `TickClock`
/// converts) and become milliseconds only for display, so no `Double` has to say what it holds.
public struct Nanoseconds: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var value: Int64

    public init(_ value: Int64) { self.value = value }

    public static func < (a: Nanoseconds, b: Nanoseconds) -> Bool { a.value < b.value }
    public static func + (a: Nanoseconds, b: Nanoseconds) -> Nanoseconds { Nanoseconds(a.value &+ b.value) }
    public static func - (a: Nanoseconds, b: Nanoseconds) -> Nanoseconds { Nanoseconds(a.value &- b.value) }
    public static let zero = Nanoseconds(0)

    public var milliseconds: Double { Double(value) / 1_000_000 }
    public var seconds: Double { Double(value) / 1_000_000_000 }

    public var description: String { TextFormat.milliseconds(self) + " ms" }
}
