import Foundation
import XCTest

/// The peak resident memory of one `calltrace` command, from GNU time (`%M`), for the tests that
/// check a view streams: its memory must not grow with the calls or the threads.
enum PeakMemory {
    /// Runs `calltrace ARGUMENTS` under /usr/bin/time, its output into the shell command `into`
    /// when given (`wc -l`: counted, not kept, so that only calltrace is measured), and fails the
    /// test unless it exits 0. Returns the peak in KiB and what it printed.
    static func of(_ arguments: [String], into pipe: String? = nil,
                   file: StaticString = #filePath, line: UInt = #line) throws -> (kilobytes: Int, result: CommandResult) {
        let script = "/usr/bin/time -f 'peak %M' \"$0\" \"$@\"" + (pipe.map { " | \($0)" } ?? "")
        let result = try Command.run("/bin/sh", ["-c", script, Workspace.cli.path] + arguments)
        XCTAssertEqual(result.status, 0, result.description, file: file, line: line)
        guard let kilobytes = result.stderr.split(separator: "\n").last(where: { $0.hasPrefix("peak ") })
            .flatMap({ Int($0.dropFirst(5)) }) else { throw TestFailure("no peak in \(result.stderr)") }
        return (kilobytes, result)
    }
}
