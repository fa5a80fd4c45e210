import ArgumentParser
import CalltraceKit

/// What tells a change from noise when two sets of runs are compared function by function
/// (`FunctionComparison`): `diff` and `check --baseline` take the same options with the same
/// defaults, so the gate fails on exactly what `diff` calls a regression (and is over the tolerance).
/// The defaults are the views' (`ViewOptions`).
struct SignificanceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Changes up to this long are noise, such as 0.1ms (read as CALLTRACE_THRESHOLD is).",
                               valueName: "duration"))
    var noiseFloor = DurationArgument(ViewOptions().noiseFloor)

    @Option(help: ArgumentHelp("With several runs a side, a change counts when the Mann-Whitney U test's p-value is under this.",
                               valueName: "p"))
    var alpha: Double = ViewOptions().alpha

    /// `--noise-floor`, or an error naming the flag.
    func floor() throws -> Nanoseconds {
        try noiseFloor.check(flag: "--noise-floor")
    }

    /// `--alpha`, or an error naming the flag.
    func significanceLevel() throws -> Double {
        guard alpha > 0, alpha < 1 else {
            throw ValidationError("--alpha '\(alpha)' is not valid: expected a significance level between 0 and 1, such as 0.05")
        }
        return alpha
    }
}
