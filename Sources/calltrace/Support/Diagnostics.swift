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
    static func warning(_ message: String) { write("calltrace: \(styled("warning:", yellow)) \(message)\n") }
    static func note(_ message: String) { write("calltrace: \(message)\n") }
    static func error(_ message: String) { write("calltrace: \(styled("error:", boldRed)) \(message)\n") }

    private static let yellow = "\u{1B}[33m", boldRed = "\u{1B}[1;31m", reset = "\u{1B}[0m"

    /// `word` in colour when stderr is a terminal that takes it (Terminal).
    private static func styled(_ word: String, _ style: String) -> String {
        Terminal.standardErrorColours ? style + word + reset : word
    }

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
        ProgressLine.clear()
        fputs(text, stderr)
    }
}
