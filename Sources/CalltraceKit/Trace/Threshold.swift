/// Parses recording thresholds such as `10ms`, `1.5ms`, `250us`, `2s`, `800ns`.
///
/// The rules are the runtime's (`CALLTRACE_THRESHOLD`): an unsigned decimal number with an
/// optional `ns`, `us`, `ms` or `s` suffix; a bare number is milliseconds; `0` records every
/// call. Fractions below a nanosecond are dropped. Anything else is nil.
public enum Threshold {
    private static let units: [(suffix: String, nanoseconds: UInt64, digits: Int)] = [
        ("ns", 1, 0), ("us", 1_000, 3), ("ms", 1_000_000, 6), ("s", 1_000_000_000, 9),
    ]

    public static func parse(_ text: String) -> Nanoseconds? {
        var number = Substring(text)
        var unit: UInt64 = 1_000_000
        if let match = units.first(where: { text.hasSuffix($0.suffix) }) {
            number = number.dropLast(match.suffix.count)
            unit = match.nanoseconds
        }
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count > 1 ? parts[1] : ""
        let isDigits = { (part: Substring) in part.allSatisfy { $0.isASCII && $0.isNumber } }
        // Like the runtime: `.5` and `5.` are numbers, `.` is not.
        guard !(whole.isEmpty && fraction.isEmpty), isDigits(whole), isDigits(fraction),
              let wholeValue = whole.isEmpty ? 0 : UInt64(whole) else { return nil }
        let (scaled, overflow) = wholeValue.multipliedReportingOverflow(by: unit)
        guard !overflow else { return nil }
        // Only the digits that can still matter for this unit (at most 9 below a second).
        var fractionNs: UInt64 = 0
        var place = unit
        for digit in fraction.prefix(9) {
            place /= 10
            fractionNs += UInt64(digit.wholeNumberValue ?? 0) * place
        }
        let (total, overflow2) = scaled.addingReportingOverflow(fractionNs)
        guard !overflow2, let value = Int64(exactly: total) else { return nil }
        return Nanoseconds(value)
    }

    /// A short form for messages: `10ms`, `1.5ms`, `250us`.
    public static func format(_ threshold: Nanoseconds) -> String {
        let ns = threshold.value
        if ns == 0 { return "0" }
        for (suffix, size, digits) in units.reversed() where ns >= Int64(size) {
            var text = TextFormat.fixed(ns, scale: digits, decimals: min(3, digits))
            if text.contains(".") {
                while text.hasSuffix("0") { text.removeLast() }
                if text.hasSuffix(".") { text.removeLast() }
            }
            return text + suffix
        }
        return "\(ns)ns"
    }
}
