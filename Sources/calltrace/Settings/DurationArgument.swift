import ArgumentParser
import CalltraceKit

/// A duration option read as CALLTRACE_THRESHOLD is (`report --threshold 5ms`, `hitches --frame`,
/// `diff --noise-floor`, `exclude-list --max-cost`), parsed once, when the command line is: the
/// command's `validate()` turns one the runtime would not read into a message naming its flag
/// (`check`), and `run()` takes `value`. (Failing the parse itself would get the argument parser's
/// words, which cannot say "negative values are not allowed".)
struct DurationArgument: ExpressibleByArgument, CustomStringConvertible {
    /// As given.
    let text: String
    /// Nil when the runtime would not read `text` as a duration.
    let value: Nanoseconds?

    init(argument: String) {
        text = argument
        value = SettingArgument.read(argument, setting: .threshold).map { Nanoseconds(Int64(clamping: $0)) }
    }

    /// A default, written as messages write durations (`100us`).
    init(_ duration: Nanoseconds) {
        text = Threshold.format(duration)
        value = duration
    }

    var defaultValueDescription: String { text }
    var description: String { text }

    /// The duration, or the message that names `flag` and the form expected.
    func check(flag: String) throws -> Nanoseconds {
        guard let value else { throw SettingArgument.invalid(text, flag: flag, setting: .threshold) }
        return value
    }
}
