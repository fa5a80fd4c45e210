import CalltraceKit
import Foundation
import XCTest

/// Helpers for the process-level tests: several traces per run, per-thread trees, stderr lines.
extension RecordedTrace {
    /// The calls of one thread's stream, in tree order.
    func calls(inStream stream: UInt32) -> [RecordedCall] { calls.filter { $0.stream == stream } }

    /// The (depth, name) outline of one thread's stream.
    func outline(ofStream stream: UInt32) -> [String] {
        calls(inStream: stream).map { String(repeating: "  ", count: $0.depth) + $0.name }
    }

    /// The thread the runtime saw with this name, if one.
    func thread(named name: String) -> ThreadInfo? { trace.threads.first { $0.name == name } }

    /// The thread whose stream holds a call of `function`.
    func thread(calling function: String) -> ThreadInfo? {
        guard let stream = calls(named: function).first?.stream else { return nil }
        return trace.threads.first { $0.stream == stream }
    }
}

extension CommandResult {
    /// stderr's lines, without the empty one after the last newline.
    var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: true) }
}

/// The names of the files in `directory` ending in `.trace`, sorted.
func traceFiles(in directory: URL) -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.filter { $0.hasSuffix(".trace") }.sorted()
}

/// The file's bytes, or nil when it cannot be read.
func contents(of url: URL) -> Data? { try? Data(contentsOf: url) }

/// The permission bits (and set-id bits) of a file, not following a symlink.
func fileMode(_ url: URL) -> mode_t? {
    var info = stat()
    guard lstat(url.path, &info) == 0 else { return nil }
    return info.st_mode & 0o7777
}

/// Whether `url` itself is a symbolic link.
func isSymlink(_ url: URL) -> Bool {
    var info = stat()
    return lstat(url.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
}

/// The number after `label ` at the start of a line of `output` ("parent 123").
func pid(after label: String, in output: String) -> Int32? {
    for line in output.split(separator: "\n") where line.hasPrefix(label + " ") {
        return Int32(line.dropFirst(label.count + 1))
    }
    return nil
}

/// What burst.c prints for `n` calls: the sum of 7i + 1.
func burstSum(_ n: Int) -> Int { 7 * (n * (n - 1) / 2) + n }

/// A file's bytes and metadata at one moment, to show later that nothing touched it.
struct FileSnapshot: Equatable, CustomStringConvertible {
    let path: String
    let bytes: Data?
    let size: Int64
    let mode: mode_t
    let inode: UInt64

    init(_ url: URL) {
        path = url.path
        bytes = try? Data(contentsOf: url)
        var info = stat()
        let found = lstat(url.path, &info) == 0
        size = found ? Int64(info.st_size) : -1
        mode = found ? info.st_mode : 0
        inode = found ? UInt64(info.st_ino) : 0
    }

    var description: String {
        let text = bytes.map { String(decoding: $0.prefix(200), as: UTF8.self) } ?? "(unreadable)"
        return "\(path): \(size) bytes, mode \(String(mode, radix: 8)), inode \(inode): \(text.debugDescription)"
    }
}

/// Asserts the file is byte for byte, size, mode and inode what `before` saw.
func assertUnchanged(_ before: FileSnapshot, _ message: String = "",
                     file: StaticString = #filePath, line: UInt = #line) {
    let now = FileSnapshot(URL(fileURLWithPath: before.path))
    XCTAssertEqual(now, before, "the file changed: \(message)\nbefore: \(before)\nafter:  \(now)", file: file, line: line)
}

/// Asserts that the program ran to its end: not killed by the timeout (a hang).
func assertDidNotHang(_ result: CommandResult, _ message: String = "",
                      file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertFalse(result.timedOut, "hung, killed after the timeout: \(message)\n\(result)", file: file, line: line)
}
