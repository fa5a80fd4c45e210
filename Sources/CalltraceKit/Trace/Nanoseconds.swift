/// A span of time in nanoseconds from a monotonic clock. Times are kept in this unit and
/// converted only for display, so no `Double` ever has to say whether it holds ms or seconds.
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
