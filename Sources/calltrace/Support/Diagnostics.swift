import ArgumentParser
import Glibc

/// A failure to report in one line, with the exit status to leave with.
struct CalltraceError: Error, CustomStringConvertible {
    var description: String
    var exitCode: Int32 = 1

    init(_ description: String, exitCode: Int32 = 1) {
        self.description = description
        self.exitCode = exitCode
    }
}

/// One-line messages on stderr: `calltrace: error: ...`, `calltrace: warning: ...`.
enum Diagnostics {
    static func warning(_ message: String) { write("calltrace: warning: \(message)\n") }
    static func note(_ message: String) { write("calltrace: \(message)\n") }
    static func error(_ message: String) { write("calltrace: error: \(message)\n") }

    /// Ends the program's last line on a shared stderr, when it may not have ended (NoteLineStart).
    static func startOwnLine() {
        if NoteLineStart.needsNewline() { write("\n") }
    }

    /// Runs a subcommand's body: any error becomes one line on stderr and a non-zero exit,
    /// never a trap or argument-parser usage text.
    static func run(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let exit as ExitCode {
            throw exit
        } catch let failure as CalltraceError {
            error(failure.description)
            throw ExitCode(failure.exitCode)
        } catch let failure {
            error(String(describing: failure))
            throw ExitCode.failure
        }
    }

    private static func write(_ text: String) {
        fflush(stdout)
        fputs(text, stderr)
    }
}
