import Foundation
import XCTest

/// The command line's small promises: --version, a note instead of an empty report, a clear
/// message for negative values, and option help that comes from the runtime's settings table.
final class CommandLineTests: XCTestCase {
    func testVersionPrintsTheNameAndAVersionNumber() throws {
        let result = try calltrace(["--version"])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertNotNil(result.stdout.range(of: #"^calltrace [0-9]+\.[0-9]+\.[0-9]+\n$"#, options: .regularExpression),
                        result.stdout)
        XCTAssertEqual(result.stderr, "")
    }

    /// The subcommands `calltrace --help` lists.
    private func subcommands() throws -> [String] {
        let overview = try calltrace(["--help"])
        XCTAssertEqual(overview.status, 0, overview.description)
        let listed = overview.stdout.components(separatedBy: "SUBCOMMANDS:").last ?? ""
        let names = listed.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
            return line.split(separator: " ").first.map(String.init)
        }.filter { $0 != "See" }
        XCTAssertTrue(names.contains("record") && names.contains("export") && names.count >= 10, "\(names)")
        return names
    }

    /// Every subcommand `calltrace --help` lists has its own help, ending with examples.
    func testEverySubcommandsHelpHasAnExample() throws {
        for name in try subcommands() {
            let help = try calltrace([name, "--help"])
            XCTAssertEqual(help.status, 0, "\(name): \(help)")
            XCTAssertTrue(help.stdout.contains("Example"), "\(name) --help has no example:\n\(help.stdout)")
        }
    }

    /// The help's literal lines (examples, a budget's TOML: the indented lines of the text above
    /// USAGE) come out whole at 80 columns, ArgumentParser's width without a terminal: a longer
    /// one would be wrapped at its last space, mid-comment. Asked at 1,000 columns too, where
    /// nothing wraps, to know the lines as written.
    func testHelpsExamplesAreNotWrappedAtEightyColumns() throws {
        for name in try subcommands() {
            let narrow = try calltrace([name, "--help"], environment: ["COLUMNS": "80"])
            let wide = try calltrace([name, "--help"], environment: ["COLUMNS": "1000"])
            XCTAssertEqual(narrow.status, 0, "\(name): \(narrow)")
            let overview = wide.stdout.components(separatedBy: "\nUSAGE:")[0]
            let literal = overview.split(separator: "\n").filter { $0.hasPrefix("  ") }.map(String.init)
            XCTAssertTrue(literal.contains { $0.hasPrefix("  calltrace \(name)") || $0.contains(" calltrace \(name) ") },
                          "\(name): no example found in\n\(wide.stdout)")
            let lines = Set(narrow.stdout.split(separator: "\n").map(String.init))
            for line in literal {
                XCTAssertTrue(lines.contains(line) && line.count < 80,
                              "\(name) --help wraps this line (\(line.count) columns) at 80 columns:\n\(line)\n\(narrow.stdout)")
            }
        }
    }

    /// `info` is a view like the others: `--format json` holds every field of the text, the threads
    /// (whose calls add up to the records) and the modules.
    func testInfoAsJSONHoldsTheTextsFields() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        let (_, url) = try fixture.run(["0"], environment: ["CALLTRACE_THRESHOLD": "0"])
        let text = try calltrace(["info", url.path])
        XCTAssertEqual(text.status, 0, text.description)
        let json = try calltrace(["info", url.path, "--format", "json"])
        XCTAssertEqual(json.status, 0, json.description)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any],
                                   json.stdout)
        let fields = text.stdout.components(separatedBy: "\n\nthreads:")[0].split(separator: "\n")
        XCTAssertGreaterThan(fields.count, 10, text.stdout)
        for field in fields {
            let parts = field.split(separator: ":", maxSplits: 1)
            let key = parts[0].replacingOccurrences(of: " ", with: "_")
            XCTAssertEqual(object[key] as? String, parts[1].trimmingCharacters(in: .whitespaces), "\(key) in \(json.stdout)")
        }
        let threads = try XCTUnwrap(object["threads"] as? [[String: Any]], json.stdout)
        XCTAssertEqual(threads.filter { $0["main"] as? Bool == true }.count, 1, json.stdout)
        XCTAssertEqual(String(threads.reduce(0) { $0 + ($1["calls"] as? Int ?? 0) }), object["records"] as? String)
        let modules = try XCTUnwrap(object["modules"] as? [[String: Any]], json.stdout)
        XCTAssertTrue(modules.contains { ($0["path"] as? String) == fixture.binary.path }, json.stdout)
        XCTAssertEqual(try calltrace(["info", url.path, "--format", "xml"]).status, 64)
    }

    func testEmptyReportSaysNoCallReachedTheRecordingThreshold() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        let (_, url) = try fixture.run(["0"], environment: ["CALLTRACE_THRESHOLD": "30s"])
        for format in ["tree", "jsonl"] {
            let result = try calltrace(["report", url.path, "--format", format])
            XCTAssertEqual(result.status, 0, result.description)
            XCTAssertEqual(result.stdout, "", "stdout carries only the report")
            XCTAssertEqual(result.stderr, "calltrace: no call lasted 30s or more (the threshold it was recorded with)\n",
                           format)
        }
    }

    func testEmptyReportNamesTheReportThresholdWhenItIsHigher() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        let (_, url) = try fixture.run(["0"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
        let full = try calltrace(["report", url.path])
        XCTAssertTrue(full.stdout.contains("main"), full.description)
        XCTAssertFalse(full.stderr.contains("no call lasted"), "a report with calls has no note:\n\(full.stderr)")
        let result = try calltrace(["report", url.path, "--threshold", "20s"])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stdout, "")
        XCTAssertEqual(result.stderr, "calltrace: no call lasted 20s or more (--threshold)\n")
    }

    func testNegativeValuesAreRefusedAsNegative() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("negative")
        let cases: [[String]] = [
            ["record", "-t", "-5ms", "--", fixture.binary.path],
            ["record", "--threshold", "-1", "--", fixture.binary.path],
            ["record", "--threshold=-5ms", "--", fixture.binary.path],
            ["record", "--max-depth", "-1", "--", fixture.binary.path],
            ["record", "--buffer", "-16M", "--", fixture.binary.path],
            ["report", "--threshold", "-1", "any.trace"],
            ["report", "any.trace", "--threshold", "-0.5ms"],
        ]
        for arguments in cases {
            let result = try calltrace(arguments, in: dir)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result)")
            XCTAssertTrue(result.stderr.contains("negative values are not allowed"), "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "\(arguments): nothing ran")
        }
        XCTAssertEqual(traceFiles(in: dir), [], "nothing recorded")
    }

    func testRecordHelpComesFromTheRuntimeSettingsTable() throws {
        let table = try String(contentsOf: Workspace.packageRoot
            .appendingPathComponent("CShims/settings/include/ct_settings.inc"), encoding: .utf8)
        // CT_SETTING(field, "VARIABLE", kind, "default", "help")
        let rows = table.split(separator: "\n").filter { $0.hasPrefix("CT_SETTING(") }.map { line in
            line.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.map { String($0.element) }
        }
        XCTAssertEqual(rows.count, 10, table)
        let help = try calltrace(["record", "--help"])
        XCTAssertEqual(help.status, 0, help.description)
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for row in rows where row[0] != "CALLTRACE_OUTPUT" {
            let defaultValue = row[1].isEmpty ? "none" : row[1]
            XCTAssertTrue(text.contains("Default: \(defaultValue), or \(row[0]) from the environment"), "\(row[0]):\n\(help.stdout)")
            let sentence = row[2].prefix(1).uppercased() + row[2].dropFirst()
            XCTAssertTrue(text.contains(sentence), "\(row[0]) help:\n\(help.stdout)")
        }
    }
}
