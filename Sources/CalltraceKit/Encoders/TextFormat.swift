/// Number formatting for every message and view, done with integer math: `String(format:)` per
/// line is too slow for ten million lines, and integers never print `-0.00` or `nan`. The one
/// place for milliseconds and hex: the tree's hot loop writes the same digits through
/// `ByteOutput.format(fixed:)`, straight into its output buffer.
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

    /// `0x` and lower-case hex digits: addresses, offsets, tags.
    static func hex<Value: BinaryInteger>(_ value: Value) -> String { "0x" + String(value, radix: 16) }

    /// Two lower-case hex digits a byte, no prefix: build-ids.
    static func hexDigits(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func power10(_ exponent: Int) -> UInt64 {
        (0..<max(exponent, 0)).reduce(1) { value, _ in value * 10 }
    }
}
