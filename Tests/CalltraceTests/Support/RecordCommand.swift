import CalltraceKit
import Foundation
import XCTest

/// `calltrace record` runs for the record tests, and what they look at afterwards.
enum RecordCommand {
    /// Runs `calltrace record <options> -- <program...>` in `directory`, in a session of its own
    /// (setsid), so that a program that signals its process group reaches `record` but never the
    /// test runner.
    static func run(_ options: [String], _ program: [String], environment: [String: String] = [:],
                    in directory: URL) throws -> CommandResult {
        try Workspace.requireProducts()
        return try Command.run(try which("setsid"), ["-w", Workspace.cli.path, "record"] + options + ["--"] + program,
                               environment: environment, currentDirectory: directory)
    }

    /// The private directories `record` makes while the program runs (`.calltrace-record-XXXXXX`):
    /// none may be left once it is done.
    static func leftovers(in directory: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix(".calltrace-record-") }
    }

    /// Every file in `directory`, hidden ones included, sorted.
    static func files(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }
}

extension CommandResult {
    /// The path in record's closing note, `calltrace: trace written to PATH (N calls recorded)`.
    var recordedTrace: String? {
        guard let start = stderr.range(of: "calltrace: trace written to ") else { return nil }
        let rest = stderr[start.upperBound...]
        guard let end = rest.range(of: " (") else { return nil }
        return String(rest[..<end.lowerBound])
    }
}

/// The pid a trace's header names.
func tracedPid(_ url: URL) throws -> UInt64 {
    try TraceReader.read(path: url.path, options: TraceReader.Options(keepCalls: false)).header.pid
}
