/// Converts the runtime's ticks (TSC or CLOCK_MONOTONIC ns) to nanoseconds, using the two
/// calibration points in the header. Integer math with a full-width product, so long traces
/// with fast TSCs neither overflow nor lose precision.
public struct TickClock: Equatable, Sendable {
    public var tick0: Ticks
    public var ns0: UInt64
    public var realtimeNs0: UInt64
    /// Nanoseconds per `ticksPerUnit` ticks; both 1 when the calibration points are equal.
    public var nsPerUnit: UInt64
    public var ticksPerUnit: UInt64

    public init(header: TraceHeader) {
        tick0 = header.calibTick0
        ns0 = header.calibNs0
        realtimeNs0 = header.realtimeNs0
        if header.calibTick1 > header.calibTick0 && header.calibNs1 > header.calibNs0 {
            nsPerUnit = header.calibNs1 - header.calibNs0
            ticksPerUnit = header.calibTick1.count - header.calibTick0.count
        } else {
            nsPerUnit = 1
            ticksPerUnit = 1
        }
    }

    /// Ticks per nanosecond (1 for CLOCK_MONOTONIC traces), for display.
    public var ticksPerNanosecond: Double { Double(ticksPerUnit) / Double(nsPerUnit) }

    /// How long `ticks` ticks last.
    public func duration(ticks: Ticks) -> Nanoseconds {
        Nanoseconds(Int64(clamping: scale(ticks.count)))
    }

    /// How many ticks `duration` lasts (rounded down).
    public func ticks(in duration: Nanoseconds) -> Ticks {
        guard duration.value > 0 else { return .zero }
        if nsPerUnit == ticksPerUnit { return Ticks(UInt64(duration.value)) }
        let product = UInt64(duration.value).multipliedFullWidth(by: ticksPerUnit)
        guard product.high < nsPerUnit else { return .max }
        return Ticks(nsPerUnit.dividingFullWidth(product).quotient)
    }

    /// CLOCK_MONOTONIC time of `tick`.
    public func monotonic(tick: Ticks) -> Nanoseconds {
        let ns: UInt64
        if tick >= tick0 {
            ns = ns0 &+ scale(tick.count - tick0.count)
        } else {
            let back = scale(tick0.count - tick.count)
            ns = back > ns0 ? 0 : ns0 - back
        }
        return Nanoseconds(Int64(clamping: ns))
    }

    /// The tick at CLOCK_MONOTONIC time `ns` (the inverse of `monotonic(tick:)`, rounded down;
    /// 0 for a time so far back that the clock had no tick for it).
    public func tick(monotonic ns: UInt64) -> Ticks {
        if ns >= ns0 { return tick0 &+ ticks(in: Nanoseconds(Int64(clamping: ns - ns0))) }
        let back = ticks(in: Nanoseconds(Int64(clamping: ns0 - ns)))
        return back > tick0 ? .zero : tick0 &- back
    }

    /// Nanoseconds since the unix epoch at `tick`.
    public func unixTime(tick: Ticks) -> Nanoseconds {
        let offset = monotonic(tick: tick) - Nanoseconds(Int64(clamping: ns0))
        return Nanoseconds(Int64(clamping: realtimeNs0)) + offset
    }

    /// `ticks * nsPerUnit / ticksPerUnit`, saturating instead of trapping.
    private func scale(_ ticks: UInt64) -> UInt64 {
        if nsPerUnit == ticksPerUnit { return ticks }
        let product = ticks.multipliedFullWidth(by: nsPerUnit)
        guard product.high < ticksPerUnit else { return UInt64.max }
        return ticksPerUnit.dividingFullWidth(product).quotient
    }
}
