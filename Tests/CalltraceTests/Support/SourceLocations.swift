@testable import CalltraceKit
import Foundation
import XCTest

/// Source locations two ways, to compare: what gdb says of functions' entry addresses, and what
/// `calltrace report --lines` prints after each name.
enum SourceLocations {
    /// `file.c:12` (the file's base name) for the entry of each of `functions` in `binary`, an
    /// unstripped program: its addresses from nm, their lines from gdb's `info line *ADDRESS`.
    /// gdb, not addr2line: several rows of the line table may share a function's entry address,
    /// and addr2line gives the last, which clang makes a line-0 row after its entry sled (a build
    /// with sleds); gdb, like the report, takes the statement row.
    static func entryLines(_ functions: [String], in binary: URL,
                           file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let symbols = try Command.run(try which("nm"), ["--defined-only", binary.path])
        var address: [String: String] = [:]
        for row in symbols.stdout.split(separator: "\n") {
            let parts = row.split(separator: " ")
            guard parts.count == 3, parts[1] == "T" || parts[1] == "t" else { continue }
            // gcc's copy of a function (`closing.constprop.0`) is the function, as the report names it.
            let name = Demangler.withoutCloneSuffix(String(parts[2]))
            if address[name] == nil || name == parts[2] { address[name] = String(parts[0]) }
        }
        let known = functions.filter { address[$0] != nil }
        XCTAssertEqual(known, functions, "nm \(binary.path):\n\(symbols.stdout)", file: file, line: line)
        let commands = known.flatMap { ["-ex", "info line *0x\(address[$0] ?? "0")"] }
        let answer = try Command.run(try which("gdb"), ["-batch", "-nx"] + commands + [binary.path])
        // `Line 37 of "eval.c" starts at address 0x1d80 <fib> and ends at 0x1d92 <fib+18>.`
        let locations = answer.stdout.split(separator: "\n").filter { $0.hasPrefix("Line ") || $0.hasPrefix("No line") }
            .map { row -> String in
                let words = row.split(separator: " ")
                guard words.count > 3, words[0] == "Line", words[2] == "of" else { return "?" }
                let path = words[3].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                return "\((path as NSString).lastPathComponent):\(words[1])"
            }
        XCTAssertEqual(locations.count, known.count, answer.description, file: file, line: line)
        return Dictionary(zip(known, locations)) { first, _ in first }
    }

    /// The rows of `report --lines` (tree): each name with the `file:line` after it, or nil for a
    /// name shown without one. A note on the call (`(preempted 1.20 ms)`, `(unfinished)`) is dropped.
    static func reported(_ tree: String) -> [(name: String, location: String?)] {
        tree.split(separator: "\n").compactMap { row in
            let columns = row.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard columns.count == 3 else { return nil }
            let shown = String(columns[2].drop { $0 == " " })
                .replacingOccurrences(of: #" \((preempted [0-9.]+ ms|unfinished|unwound)\)$"#, with: "",
                                      options: .regularExpression)
            guard let match = shown.range(of: #" \([^()]+:[0-9]+\)$"#, options: .regularExpression) else {
                return (shown, nil)
            }
            return (String(shown[..<match.lowerBound]), String(shown[match].dropFirst(2).dropLast()))
        }
    }
}
