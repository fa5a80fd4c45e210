@testable import CalltraceKit
import Foundation
import XCTest

/// Source lines are those gdb gives for each function's entry address, on a real program built by
/// its own Makefile (calc: four files, -O2 -g) with gcc and clang. gcc may put a row of the
/// previous function's last line, not a statement, at a function's entry, and clang a line-0 row
/// after its entry sled: neither must win.
final class SourceLineTests: XCTestCase {
    func testEveryFunctionsLineIsTheOneGdbGives() throws {
        let make = try which("make")
        // The workload without its `repeat` lines: every function runs, in a few thousand calls.
        let full = try String(contentsOf: Workspace.fixtures.appendingPathComponent("interp/workload.calc"), encoding: .utf8)
        let small = Workspace.directory("calc-lines").appendingPathComponent("small.calc")
        try full.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("repeat") }
            .joined(separator: "\n").write(to: small, atomically: true, encoding: .utf8)
        let workload = small.path
        for compiler in Compiler.allCases {
            try Workspace.requireProducts()
            let out = Workspace.directory("calc-lines-\(compiler.rawValue)")
            let built = try Command.run(make, ["-C", Workspace.fixtures.appendingPathComponent("interp").path,
                                               "O=\(out.path)", "CC=\(Workspace.compilerWrapper.path)"],
                                        environment: compiler.wrapperEnvironment.merging(
                                            ["CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path]) { a, _ in a })
            XCTAssertEqual(built.status, 0, built.description)
            let calc = out.appendingPathComponent("calc")
            let trace = out.appendingPathComponent("lines.trace")
            try? FileManager.default.removeItem(at: trace)
            let run = try Command.run(calc.path, [workload], environment: [
                "CALLTRACE_THRESHOLD": "0", "CALLTRACE_MUTE": "off", "CALLTRACE_OUTPUT": trace.path,
                "LD_LIBRARY_PATH": "",
            ], timeout: 120)
            // The workload's errors give calc exit status 1, traced or not: only the trace matters here.
            XCTAssertTrue(FileManager.default.fileExists(atPath: trace.path), run.description)
            let report = try calltrace(["report", trace.path, "--format", "jsonl"])
            XCTAssertEqual(report.status, 0, report.description)
            var ours: [String: String] = [:]  // function -> file:line (file's base name)
            for line in report.stdout.split(separator: "\n") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let name = object["function"] as? String, ours[name] == nil,
                      let file = object["file"] as? String, let number = object["line"] as? Int else { continue }
                ours[name] = "\((file as NSString).lastPathComponent):\(number)"
            }
            // The program's own functions (the symbol table has them; libc's are not in calc).
            let symbols = try Command.run(try which("nm"), ["--defined-only", calc.path]).stdout
            let defined = Set(symbols.split(separator: "\n").compactMap { row -> String? in
                let parts = row.split(separator: " ")
                return parts.count == 3 && (parts[1] == "T" || parts[1] == "t") ? String(parts[2]) : nil
            })
            let names = ours.keys.filter(defined.contains).sorted()
            XCTAssertGreaterThan(names.count, 10, "\(compiler): functions with lines: \(ours)")
            let theirs = try SourceLocations.entryLines(names, in: calc)
            for name in names {
                XCTAssertEqual(ours[name], theirs[name], "\(compiler): \(name)")
            }
        }
    }

    /// A function whose entry holds a row of the previous function's last line (not a statement)
    /// before its own: its line is its own, as addr2line says (entry_rows.s, assembled with gcc).
    func testTheStatementRowAtAnEntryWins() throws {
        let directory = Workspace.directory("entry-rows")
        let binary = directory.appendingPathComponent("entry_rows").path
        let built = try Command.run(try which("gcc"), ["-g", "-o", binary,
                                                      Workspace.fixtures.appendingPathComponent("entry_rows.s").path])
        XCTAssertEqual(built.status, 0, built.description)
        let image = try ElfImage(path: binary)
        let lines = try XCTUnwrap(LineTable(image: image))
        let symbols = try Command.run(try which("nm"), ["--defined-only", binary]).stdout
        func entry(_ name: String) throws -> UInt64 {
            let line = try XCTUnwrap(symbols.split(separator: "\n").first { $0.hasSuffix(" T \(name)") })
            return try XCTUnwrap(UInt64(line.prefix { $0 != " " }, radix: 16))
        }
        XCTAssertEqual(lines.location(of: try entry("first"))?.line, 10)
        XCTAssertEqual(lines.location(of: try entry("second"))?.line, 20, "not the previous function's 12")
        XCTAssertEqual(lines.location(of: try entry("main"))?.line, 30)
    }

    // MARK: - report --lines

    /// The tree's `name (file:line)`: base names, but the path as DWARF gives it for two files of
    /// the same base name; a function without a line keeps its bare name.
    func testTreeLinesShowBaseNamesUnlessTwoFilesShareOne() {
        let profile = SyntheticRuns.namedProfile([
            (ProfileFunction(name: "main", module: "app", file: "/src/app/main.c", line: 10), 4_000_000),
            (ProfileFunction(name: "parse", module: "app", file: "/src/app/util.c", line: 20), 3_000_000),
            (ProfileFunction(name: "hash", module: "libx.so", file: "/src/lib/util.c", line: 5), 2_000_000),
            (ProfileFunction(name: "memcpy", module: "libc.so.6"), 1_000_000),
        ])
        var options = ViewOptions()
        options.lines = true
        XCTAssertEqual(ReportTreeView.text(ViewInput([profile]), options: options), """
             0|   4.00 ms|main (main.c:10)
             0|   3.00 ms|parse (/src/app/util.c:20)
             0|   2.00 ms|hash (/src/lib/util.c:5)
             0|   1.00 ms|memcpy

            """)
        XCTAssertEqual(ReportTreeView.text(ViewInput([profile])).split(separator: "\n").map { $0.split(separator: "|")[2] },
                       ["main", "parse", "hash", "memcpy"], "no lines unless asked")
    }

    /// `calltrace report --lines` of a threshold-0 trace: each function's file and line are those
    /// gdb gives for its entry address (static_calls.c, gcc and clang, -O2 -g: one-line
    /// signatures, where the declaration line and the entry row agree).
    func testReportLinesGiveTheLineGdbGivesForEachEntry() throws {
        let functions = ["main", "outer_loop", "middle_step", "leaf_sum"]
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["static_calls.c"], compiler: compiler)
            let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_MUTE": "off"])
            XCTAssertEqual(run.status, 0, run.description)
            let report = try calltrace(["report", "--lines", trace.path])
            XCTAssertEqual(report.status, 0, report.description)
            let rows = SourceLocations.reported(report.stdout)
            XCTAssertEqual(Set(rows.map(\.name)), Set(functions), "\(compiler):\n\(report.stdout)")
            let expected = try SourceLocations.entryLines(functions, in: fixture.binary)
            for row in rows {
                XCTAssertEqual(row.location, expected[row.name], "\(compiler): \(row.name)\n\(report.stdout)")
            }
            // Without --lines, names alone.
            let plain = try calltrace(["report", trace.path])
            XCTAssertTrue(SourceLocations.reported(plain.stdout).allSatisfy { $0.location == nil }, plain.stdout)
        }
    }

    /// Signatures over several lines (signatures.c, gcc and clang, -O2 -g): `report --lines` gives
    /// each function the line with its name (DWARF's declaration line), where the entry row is the
    /// line where the code starts, `){` or `{`.
    func testReportLinesGiveTheLineThatNamesTheFunction() throws {
        let source = try String(contentsOf: Workspace.fixtures.appendingPathComponent("signatures.c"), encoding: .utf8)
        var named: [String: String] = [:]  // function -> signatures.c:line of its "name:" mark
        for (index, text) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let mark = text.range(of: "// name:") { named[String(text[mark.upperBound...])] = "signatures.c:\(index + 1)" }
        }
        XCTAssertEqual(Set(named.keys), ["spread", "closing", "oneline", "main"])
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["signatures.c"], compiler: compiler)
            let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_MUTE": "off"])
            XCTAssertEqual(run.status, 0, run.description)
            let report = try calltrace(["report", "--lines", trace.path])
            XCTAssertEqual(report.status, 0, report.description)
            let rows = SourceLocations.reported(report.stdout)
            XCTAssertEqual(Set(rows.map(\.name)), Set(named.keys), "\(compiler):\n\(report.stdout)")
            for row in rows {
                XCTAssertEqual(row.location, named[row.name], "\(compiler): \(row.name)\n\(report.stdout)")
            }
            // The entry rows differ for the spread signatures: the test tells the two apart.
            let entries = try SourceLocations.entryLines(["spread", "closing"], in: fixture.binary)
            XCTAssertNotEqual(entries["spread"], named["spread"], "\(compiler)")
            XCTAssertNotEqual(entries["closing"], named["closing"], "\(compiler)")
        }
    }

    /// Two source files named util.c (in two directories, sources written by the test): the tree
    /// shows each function's file by the path DWARF gives, which tells them apart.
    func testReportLinesShowPathsWhenTwoFilesShareABaseName() throws {
        try Workspace.requireProducts()
        let directory = Workspace.directory("same-base-name")
        var sources: [String] = []
        for (folder, function) in [("left", "left_work"), ("right", "right_work")] {
            let folderURL = directory.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: folderURL, withIntermediateDirectories: true)
            let source = folderURL.appendingPathComponent("util.c")
            try "__attribute__((noinline)) int \(function)(int n) { return n * 3 + 1; }\n"
                .write(to: source, atomically: true, encoding: .utf8)
            sources.append(source.path)
        }
        let main = directory.appendingPathComponent("main.c")
        try "int left_work(int);\nint right_work(int);\nint main(void) { return left_work(1) + right_work(2) == 11 ? 0 : 1; }\n"
            .write(to: main, atomically: true, encoding: .utf8)
        let binary = directory.appendingPathComponent("same-base-name")
        let built = try Command.run(Workspace.compilerWrapper.path, ["-O2", "-g", main.path] + sources + ["-o", binary.path],
                                    environment: ["CALLTRACE_CC": "gcc", "CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path])
        XCTAssertEqual(built.status, 0, built.description)
        let trace = directory.appendingPathComponent("run.trace")
        let run = try Command.run(binary.path, [], environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_OUTPUT": trace.path])
        XCTAssertEqual(run.status, 0, run.description)
        let report = try calltrace(["report", "--lines", trace.path])
        XCTAssertEqual(report.status, 0, report.description)
        let rows = Dictionary(SourceLocations.reported(report.stdout).map { ($0.name, $0.location ?? "") }) { a, _ in a }
        XCTAssertEqual(rows["main"], "main.c:3", report.stdout)
        XCTAssertEqual(rows["left_work"], "\(sources[0]):1", report.stdout)
        XCTAssertEqual(rows["right_work"], "\(sources[1]):1", report.stdout)
    }
}
