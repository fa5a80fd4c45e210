import ArgumentParser
import CalltraceKit
import Glibc

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a trace in a format other tools read: Perfetto, Chrome's trace JSON, speedscope, folded stacks.",
        discussion: """
            Examples:
              calltrace export app.trace --format perfetto -o app.pftrace   # ui.perfetto.dev
              calltrace export app.trace --format chrome -o app.json        # chrome://tracing, ui.perfetto.dev
              calltrace export app.trace --format speedscope -o app.speedscope.json
              calltrace export app.trace --format folded | flamegraph.pl > app.svg
            """
    )

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: String

    @Option(help: ArgumentHelp("The format: \(ViewRegistry.help(of: .export)).", valueName: "format"))
    var format: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (replacing it) instead of standard output.",
                                                    valueName: "file"))
    var output: String?

    func validate() throws {
        try ViewSelection.check(format, command: .export)
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .export)
            let (trace, profile) = try ProfileLoading.read(file, lines: view.needsLines)
            var descriptor = STDOUT_FILENO
            if let output {
                descriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                if descriptor < 0 { throw CalltraceError("\(output): cannot write: \(String(cString: strerror(errno)))") }
            }
            defer { if descriptor != STDOUT_FILENO { close(descriptor) } }
            var failed: Int32 = 0
            let bytes = ByteOutput { chunk in
                var offset = 0
                while offset < chunk.count, failed == 0, let base = chunk.baseAddress {
                    let written = write(descriptor, base + offset, chunk.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    if written <= 0 { failed = written < 0 ? errno : EIO; break }
                    offset += written
                }
            }
            view.render(ViewInput([profile]), options: ViewOptions(), to: bytes)
            bytes.flush()
            if failed != 0, let output {
                throw CalltraceError("\(output): cannot write: \(String(cString: strerror(failed)))")
            }
            TraceLoading.reportWarnings(of: trace)
        }
    }
}
