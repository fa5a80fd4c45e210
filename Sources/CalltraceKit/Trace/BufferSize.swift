/// Parses trace buffer sizes such as `16M`, `512k`, `1G`, `65536` (bytes).
///
/// The rules are the runtime's (`ct_parse_size` in CShims/runtime/ct_settings.c): a whole number
/// with an optional `k`, `M` or `G` suffix (either case, powers of 1024), optionally followed by
/// `B`; at least 8k and at most 1 TiB. Anything else is nil.
public enum BufferSize {
    public static let minimum: UInt64 = 8192

    public static func parse(_ text: String) -> UInt64? {
        var rest = Substring(text)
        if rest.last == "B" || rest.last == "b" { rest = rest.dropLast() }
        var multiplier: UInt64 = 1
        switch rest.last {
        case "k", "K": multiplier = 1 << 10
        case "m", "M": multiplier = 1 << 20
        case "g", "G": multiplier = 1 << 30
        default: break
        }
        if multiplier > 1 { rest = rest.dropLast() }
        guard !rest.isEmpty, rest.allSatisfy({ $0.isASCII && $0.isNumber }),
              let value = UInt64(rest), value <= (1 << 40) / multiplier else { return nil }
        let bytes = value * multiplier
        return bytes >= minimum ? bytes : nil
    }
}
