import ArgumentParser
import CalltraceKit

struct Hitches: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Count frames and dropped frames, and show the calls behind the worst hitches.",
        discussion: """
            The program marks the start of each frame of its render or event loop with calltrace_frame() \
            (calltrace.h). An interval between two frames that lasts k target intervals drops k-1 frames; \
            the target is CALLTRACE_FRAME as recorded (default 16.67ms) unless --frame gives another.

            Example:
              calltrace hitches app.trace --frame 8.33ms --worst 5
            """
    )

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: FilePath

    @Option(help: ArgumentHelp("The output format: \(ViewRegistry.help(of: .hitches)).", valueName: "format"))
    var format: String = ViewRegistry.formats(of: .hitches)[0]

    @Option(parsing: .unconditional,
            help: ArgumentHelp("The target frame interval, such as 16.67ms (default: the one recorded).",
                               valueName: "duration"))
    var frame: DurationArgument?

    @Option(help: ArgumentHelp("How many of the worst hitches to list.", valueName: "count"))
    var worst = 10

    func validate() throws {
        try ViewSelection.check(format, command: .hitches)
        if let frame, try frame.check(flag: "--frame") == .zero {
            throw ValidationError("--frame \(frame) is not valid: a frame interval must be longer than 0")
        }
        if worst < 1 { throw ValidationError("--worst \(worst) is not valid: expected 1 or more") }
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .hitches)
            let (trace, profile) = try ProfileLoading.read(file, lines: view.needsLines)
            var options = ViewOptions()
            options.limit = worst
            options.frameInterval = frame?.value
            let output = ByteOutput(sink: StandardOutput.writeAll)
            view.render(ViewInput([profile]), options: options, to: output)
            output.flush()
            TraceLoading.reportWarnings(of: trace)
        }
    }
}
