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
    /// (A filter's leading '-' excludes a function: not a sign.)
    @discardableResult
    static func check(_ text: String, flag: String, setting: RuntimeSetting) throws -> UInt64 {
        // A leading '-' is only ever a sign here (the options take their value unconditionally):
        // say so plainly rather than "not a duration".
        if text.hasPrefix("-") && setting.kind != CT_SETTING_FILTER {
            throw ValidationError("\(flag) \(text): negative values are not allowed (expected \(setting.expected))")
        }
        guard let value = setting.check(text) else {
            throw ValidationError("\(flag) '\(text)' is not valid: expected \(setting.expected)")
        }
        return value
    }

    private static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst()
    }
}
