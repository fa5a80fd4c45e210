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

            --diff BASE NEW (each a trace or a directory of runs) draws NEW's graph coloured by the \
            change of each frame's self time per run against the same stack in BASE: red slower, blue \
            faster, grey unchanged or not significant (a Mann-Whitney U test with several runs a side, \
            else a change over 5% and 0.1 ms); stacks only BASE had are listed under it.

            Examples:
              calltrace flame app.trace -o app.svg
              calltrace flame app.trace --thread main -o main.svg
              calltrace flame --diff before/ after/ -o diff.svg
            """
    )

    @Argument(help: "The trace file written by `calltrace record`; with --diff, BASE and NEW (traces or directories).")
    var files: [FilePath] = []

    @Flag(help: "Compare: draw NEW's flame graph coloured by the change of self time against BASE.")
    var diff = false

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (replacing it) instead of standard output.",
                                                    valueName: "file"))
    var output: FilePath?

    @Option(help: ArgumentHelp("Draw only this thread: 'main' or a thread id. Default: every thread with calls.",
                               valueName: "thread"))
    var thread: String?

    @Option(help: ArgumentHelp("The format: \(ViewRegistry.help(of: .flame)).", valueName: "format"))
    var format: String = ViewRegistry.formats(of: .flame)[0]

    func validate() throws {
        // `--format diff` asked for the differential graph once, as --diff does: one way is enough.
        if format == DiffFlameGraphSVG.format {
            throw ValidationError("--format diff is no longer taken: draw a differential flame graph with --diff BASE NEW")
        }
        try ViewSelection.check(format, command: .flame)
        if diff {
            guard files.count == 2 else { throw ValidationError("--diff takes two arguments, BASE and NEW (traces or directories of runs)") }
            if thread != nil { throw ValidationError("--thread cannot be used with --diff (every thread of a run is merged)") }
        } else {
            guard files.count == 1 else { throw ValidationError("expected one trace file (or --diff BASE NEW)") }
        }
        if let thread, thread != "main", UInt64(thread) == nil {
            throw ValidationError("--thread '\(thread)': expected 'main' or a thread id (a number)")
        }
    }

    func run() throws {
        try Diagnostics.run {
            if diff {
                // Each run merged into the graph as it is read, then dropped: many runs need the memory of one.
                let base = try ProfileLoading.files([files[0]]), new = try ProfileLoading.files([files[1]])
                var graph = DiffFlameGraph(baseRuns: base.count, newRuns: new.count)
                try ProfileLoading.forEach(base, lines: false) { graph.add($0, isNew: false) }
                try ProfileLoading.forEach(new, lines: false) { graph.add($0, isNew: true) }
                try OutputFile.render(DiffFlameGraphSVG.self, ViewInput([], diffFlameGraph: graph), to: output)
                return
            }
            let file = files[0]
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
