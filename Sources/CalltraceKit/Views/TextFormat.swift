/// Number formatting for the views, done with integer math: `String(format:)` per line is too
/// slow for ten million lines, and integers never print `-0.00` or `nan`.
enum TextFormat {
    /// `value` right-aligned in `width` columns.
    static func padded(_ value: String, width: Int) -> String {
        value.count >= width ? value : String(repeating: " ", count: width - value.count) + value
    }

    /// Fixed-point text of `value / 10^scale` rounded to `decimals` places (`decimals <= scale`).
    static func fixed(_ value: Int64, scale: Int, decimals: Int) -> String {
        let magnitude = value.magnitude
        let divisor = power10(scale - decimals)
        let (rounded, overflow) = magnitude.addingReportingOverflow(divisor / 2)
        let units = (overflow ? magnitude : rounded) / divisor
        let unit = power10(decimals)
        var text = (value < 0 && units > 0 ? "-" : "") + String(units / unit)
        if decimals > 0 {
            let fraction = String(units % unit)
            text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        return text
    }

    /// Milliseconds with `decimals` places: `12.11`.
    static func milliseconds(_ time: Nanoseconds, decimals: Int = 2) -> String {
        fixed(time.value, scale: 6, decimals: decimals)
    }

    /// Seconds with `decimals` places: `1732241234.567890`.
    static func seconds(_ time: Nanoseconds, decimals: Int = 6) -> String {
        fixed(time.value, scale: 9, decimals: decimals)
    }

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }

    private static func power10(_ exponent: Int) -> UInt64 {
        (0..<max(exponent, 0)).reduce(1) { value, _ in value * 10 }
    }
}
