import Glibc

/// Whether to colour what goes to a file descriptor: only a terminal gets colour, never a pipe or
/// a file, and never when NO_COLOR is set to anything (https://no-color.org) or TERM is `dumb`.
/// CLICOLOR_FORCE (set, not "0") colours a pipe too, for `| less -R`.
enum Terminal {
    static func colours(_ descriptor: Int32) -> Bool {
        if let noColour = variable("NO_COLOR"), !noColour.isEmpty { return false }
        if let force = variable("CLICOLOR_FORCE"), !force.isEmpty, force != "0" { return true }
        if variable("TERM") == "dumb" { return false }
        return isatty(descriptor) == 1
    }

    static let standardOutputColours = colours(STDOUT_FILENO)
    static let standardErrorColours = colours(STDERR_FILENO)
    /// A line that rewrites itself (the progress line) needs a real terminal, whatever the colour.
    static let standardErrorIsTerminal = isatty(STDERR_FILENO) == 1 && variable("TERM") != "dumb"

    private static func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
