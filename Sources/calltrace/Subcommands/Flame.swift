import ArgumentParser
import CalltraceKit

struct Flame: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw a trace as a flame graph: one self-contained SVG file.",
        discussion: """
            Calls with the same stack are merged; a frame's width is their inclusive time, so the gap \
            above a frame is its self time. Each thread is its own graph, the main thread's first \
            (--thread shows one). Frames narrower than 0.1% of the width are left out. Hover a frame \
            for its full name, cost, share, self time, calls and source line; click it to zoom (a \
            browser runs the embedded script; without it the picture is the same, unzoomed).

            Examples:
              calltrace flame app.trace -o app.svg
              calltrace flame app.trace --thread main -o main.svg
            """
    )

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: FilePath

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (replacing it) instead of standard output.",
                                                    valueName: "file"))
    var output: FilePath?

    @Option(help: ArgumentHelp("Draw only this thread: 'main' or a thread id. Default: every thread with calls.",
                               valueName: "thread"))
    var thread: String?

    @Option(help: ArgumentHelp("The format: \(ViewRegistry.help(of: .flame)).", valueName: "format"))
    var format: String = ViewRegistry.formats(of: .flame)[0]

    func validate() throws {
        try ViewSelection.check(format, command: .flame)
        if let thread, thread != "main", UInt64(thread) == nil {
            throw ValidationError("--thread '\(thread)': expected 'main' or a thread id (a number)")
        }
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .flame)
            let (trace, read) = try ProfileLoading.read(file, lines: view.needsLines)
            var profile = read
            if let thread {
                let chosen = profile.threads.filter { thread == "main" ? $0.isMain : $0.tid == UInt64(thread) }
                if chosen.isEmpty {
                    let known = profile.threads.map { "\($0.tid)" + ($0.isMain ? " (main)" : "") }.joined(separator: ", ")
                    throw CalltraceError("\(file): no thread \(thread) in this trace (it has: \(known.isEmpty ? "none" : known))")
                }
                profile.threads = chosen
            }
            try OutputFile.render(view, ViewInput([profile]), to: output)
            TraceLoading.reportWarnings(of: trace)
        }
    }
}
