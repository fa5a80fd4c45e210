/// Recording thresholds in messages (`10ms`, `1.5ms`, `250us`). Parsing them is the runtime's
/// parser's job (CShims/settings), which the CLI calls, so that both accept the same values.
public enum Threshold {
    private static let units: [(suffix: String, nanoseconds: UInt64, digits: Int)] = [
        ("ns", 1, 0), ("us", 1_000, 3), ("ms", 1_000_000, 6), ("s", 1_000_000_000, 9),
    ]

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
