import ArgumentParser
import CalltraceKit

/// Checks a `--threshold` value in `validate()`, naming the flag in the message.
enum ThresholdArgument {
    static func parse(_ text: String, flag: String = "--threshold") throws -> Nanoseconds {
        guard let value = Threshold.parse(text) else {
            throw ValidationError("\(flag) '\(text)' is not a duration: use a number with ns, us, ms or s "
                                  + "(a bare number is ms), such as 10ms, 250us, 1.5s or 0")
        }
        return value
    }
}
