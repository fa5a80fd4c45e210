import ArgumentParser
import Foundation

/// A share option (`diff --noise 5%`): a percentage, or a bare fraction up to 1. Parsed once, when
/// the command line is, as `DurationArgument` is: `check` in `validate()`, `value` in `run()`.
struct ShareArgument: ExpressibleByArgument, CustomStringConvertible {
    /// As given.
    let text: String
    /// The fraction (`5%`: 0.05); nil when `text` is not a share.
    let value: Double?

    init(argument: String) {
        text = argument
        let percent = argument.hasSuffix("%")
        if let number = Double(percent ? String(argument.dropLast()) : argument), number.isFinite, number >= 0,
           percent || number <= 1 {
            value = percent ? number / 100 : number
        } else {
            value = nil
        }
    }

    /// A default, written as a percentage (0.05: `5%`).
    init(_ share: Double) {
        text = String(format: "%g%%", share * 100)
        value = share
    }

    var defaultValueDescription: String { text }
    var description: String { text }

    /// The fraction, or the message that names `flag` and the form expected.
    func check(flag: String) throws -> Double {
        guard let value else { throw ValidationError("\(flag) '\(text)' is not valid: expected a share such as 5% or 0.05") }
        return value
    }
}
