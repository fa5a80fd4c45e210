import Foundation
import XCTest

/// Source locations two ways, to compare: what addr2line says of functions' entry addresses, and
/// what `calltrace report --lines` prints after each name.
enum SourceLocations {
    /// `file.c:12` (the file's base name) for the entry of each of `functions` in `binary`, an
    /// unstripped program: its addresses from nm, their lines from addr2line.
    static func addr2line(_ functions: [String], in binary: URL,
                          file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let symbols = try Command.run(try which("nm"), ["--defined-only", binary.path])
        var address: [String: String] = [:]
        for row in symbols.stdout.split(separator: "\n") {
            let parts = row.split(separator: " ")
            if parts.count == 3, parts[1] == "T" || parts[1] == "t" { address[String(parts[2])] = String(parts[0]) }
        }
        let known = functions.filter { address[$0] != nil }
        XCTAssertEqual(known, functions, "nm \(binary.path):\n\(symbols.stdout)", file: file, line: line)
        let answer = try Command.run(try which("addr2line"), ["-e", binary.path] + known.compactMap { address[$0] })
        // `/path/to/file.c:12 (discriminator 1)`
        let locations = answer.stdout.split(separator: "\n").map { row -> String in
            let location = row.split(separator: " ").first.map(String.init) ?? ""
            let parts = location.split(separator: ":")
            return "\(((parts.first.map(String.init) ?? "") as NSString).lastPathComponent):\(parts.last ?? "")"
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
