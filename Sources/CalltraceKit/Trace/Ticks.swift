/// A time or a duration on the runtime's clock, as the trace stores it: TSC ticks, or
/// CLOCK_MONOTONIC nanoseconds when the TSC was not used (header flag bit 1). The unit of the
/// format layer only: `TickClock` turns ticks into `Nanoseconds`, which everything above uses.
///
/// Sums wrap, as the runtime's do: a damaged record must not trap.
public struct Ticks: Hashable, Comparable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public var count: UInt64

    public init(_ count: UInt64) { self.count = count }
    public init(integerLiteral count: UInt64) { self.count = count }

    public static let zero = Ticks(0)
    public static let max = Ticks(UInt64.max)

    public static func < (a: Ticks, b: Ticks) -> Bool { a.count < b.count }
    public static func &+ (a: Ticks, b: Ticks) -> Ticks { Ticks(a.count &+ b.count) }
    public static func &- (a: Ticks, b: Ticks) -> Ticks { Ticks(a.count &- b.count) }

    public var description: String { "\(count) ticks" }
}
