import CalltraceKit
import CalltraceSettings

/// One row of the runtime's settings table (`CShims/settings/include/ct_settings.inc`), checked with
/// the runtime's own parser: what `record` accepts for a setting is what the runtime accepts.
struct RuntimeSetting {
    /// The table's field name, such as `max_depth`.
    let field: String
    /// The environment variable, such as `CALLTRACE_MAX_DEPTH`.
    let variable: String
    let kind: ct_setting_kind
    /// The runtime's default, as the table writes it (`10ms`, `16M`).
    let defaultValue: String
    /// One sentence, without its final period.
    let help: String
    /// What a valid value looks like: `a whole number from 1 to 4194304`.
    let expected: String
    private let index: Int

    /// Every row, in the table's order.
    static let all: [RuntimeSetting] = (0..<ct_setting_count()).compactMap { index in
        guard let row = ct_setting_row(index)?.pointee else { return nil }
        return RuntimeSetting(field: String(cString: row.field), variable: String(cString: row.variable),
                              kind: row.kind, defaultValue: String(cString: row.default_value),
                              help: String(cString: row.help), expected: String(cString: row.expected),
                              index: index)
    }

    static let threshold = named("threshold")
    static let output = named("output")
    static let threads = named("threads")
    static let maxDepth = named("max_depth")
    static let buffer = named("buffer")
    static let limit = named("limit")
    static let mute = named("mute")
    static let frame = named("frame")
    static let hang = named("hang")
    static let filter = named("filter")

    /// The row for `field`. The table is compiled in: a missing row is a build mistake, which the
    /// settings tests catch, so this falls back to an empty row rather than trapping.
    private static func named(_ field: String) -> RuntimeSetting {
        all.first { $0.field == field }
            ?? RuntimeSetting(field: field, variable: "", kind: CT_SETTING_PATH, defaultValue: "", help: "",
                              expected: "", index: -1)
    }

    /// The value as the runtime would read it (nanoseconds, bytes, frames, 0/1 for main/all, 0/1/2
    /// for auto/off/hook, a path's length), or nil where the runtime would warn and use the default.
    func check(_ text: String) -> UInt64? {
        guard index >= 0 else { return nil }
        var value: UInt64 = 0
        return ct_setting_check(index, text, &value) ? value : nil
    }

    /// `check` of a path setting, as bytes.
    func check(_ path: FilePath) -> UInt64? {
        guard index >= 0 else { return nil }
        var value: UInt64 = 0
        return path.withCString { ct_setting_check(index, $0, &value) } ? value : nil
    }
}
