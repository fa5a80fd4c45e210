import ArgumentParser
import CalltraceKit
import Glibc

struct Symbolize: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Store the names a trace uses into it, so it reads without the program's files.",
        discussion: """
            calltrace record does this when the program ends (unless --no-symbols); use symbolize for \
            a trace written by a program run with CALLTRACE_* variables directly, or an older trace. \
            Afterwards every command shows the stored names even when the program was rebuilt or \
            deleted, or on another machine. Storing again replaces the earlier table (names the \
            program's files no longer have are kept). A trace whose program is still running is \
            refused.

            Example:
              CALLTRACE_OUTPUT=app.trace ./app && calltrace symbolize app.trace
            """
    )

    @Argument(help: "The trace file to change.")
    var file: FilePath

    @Flag(help: "Store names only, no source files and lines (a smaller table; lines then come from the program's files while they exist).")
    var noLines = false

    func run() throws {
        try Diagnostics.run {
            let outcome = try Self.store(file, lines: !noLines)
            outcome.warnings.forEach(Diagnostics.warning)
            let detail = outcome.hasLines ? "with source lines" : "without source lines"
            Diagnostics.note("stored \(outcome.names) of \(outcome.addresses) names \(detail) in \(file) "
                             + "(\(outcome.bytes) bytes)")
        }
    }

    /// Stores the table into `path`; errors become `CalltraceError`s naming the file.
    static func store(_ path: FilePath, lines: Bool) throws -> TraceSymbolizer.Outcome {
        // Past a file size limit a write fails (EFBIG, one error line, the earlier table kept)
        // rather than killing calltrace half-way. Only calltrace's own disposition: `record`
        // stores after its program has ended, so no program inherits it.
        signal(SIGXFSZ, SIG_IGN)
        do {
            return try ProgressLine.reading(path, TraceReader.Options()) { options in
                try TraceSymbolizer.symbolize(path: path, lines: lines, progress: options.progress,
                                              warn: Diagnostics.warning)
            }
        } catch let error as TraceError {
            switch error {
            case .cannotOpen, .isDirectory: throw CalltraceError("\(error)")
            default: throw CalltraceError("\(path): \(error)")
            }
        } catch let error as TraceSymbolizer.Failure {
            throw CalltraceError("\(error)")
        }
    }
}
