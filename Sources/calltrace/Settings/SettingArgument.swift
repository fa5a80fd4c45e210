import ArgumentParser
import CalltraceSettings

/// Options that carry a runtime setting (`record -t`, `--threads`, `--max-depth`, `--buffer`, and
/// `report --threshold`, which reads durations the same way): help text and checks come from the
/// runtime's table and parser, so an option accepts exactly what the runtime accepts.
enum SettingArgument {
    /// The row's help, the values it takes (with their range), its default, and where the value
    /// comes from when the option is not given.
    static func help(_ setting: RuntimeSetting, valueName: String) -> ArgumentHelp {
        let values = setting.help.contains(setting.expected) ? "" : " Takes \(setting.expected)."
        let defaultValue = setting.defaultValue.isEmpty ? "none" : setting.defaultValue
        return ArgumentHelp("\(sentence(setting.help)).\(values) Default: \(defaultValue), or "
                            + "\(setting.variable) from the environment when it is set.", valueName: valueName)
    }

    /// The value the runtime would read from `text`, or a message naming the flag and the expected form.
    @discardableResult
    static func check(_ text: String, flag: String, setting: RuntimeSetting) throws -> UInt64 {
        guard let value = read(text, setting: setting) else { throw invalid(text, flag: flag, setting: setting) }
        return value
    }

    /// The value the runtime would read from `text`; nil for a negative one, or one it would not read.
    static func read(_ text: String, setting: RuntimeSetting) -> UInt64? {
        isNegative(text, setting: setting) ? nil : setting.check(text)
    }

    /// Why `read` gave nil, naming the flag.
    static func invalid(_ text: String, flag: String, setting: RuntimeSetting) -> ValidationError {
        // A leading '-' is only ever a sign here (the options take their value unconditionally):
        // say so plainly rather than "not a duration".
        if isNegative(text, setting: setting) {
            return ValidationError("\(flag) \(text): negative values are not allowed (expected \(setting.expected))")
        }
        return ValidationError("\(flag) '\(text)' is not valid: expected \(setting.expected)")
    }

    /// (A filter's leading '-' excludes a function: not a sign.)
    private static func isNegative(_ text: String, setting: RuntimeSetting) -> Bool {
        text.hasPrefix("-") && setting.kind != CT_SETTING_FILTER
    }

    private static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst()
    }
}
