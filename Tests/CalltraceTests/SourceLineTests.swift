@testable import CalltraceKit
import Foundation
import XCTest

/// Source lines are those addr2line gives for each function's entry address, on a real program
/// built by its own Makefile (calc: four files, -O2 -g) with gcc and clang. gcc may put a row of
/// the previous function's last line, not a statement, at a function's entry: it must not win.
final class SourceLineTests: XCTestCase {
    func testEveryFunctionsLineIsTheOneAddr2lineGives() throws {
        let make = try which("make")
        let addr2line = try which("addr2line")
        let nm = try which("nm")
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
                                        environment: ["CALLTRACE_CC": compiler.rawValue,
                                                      "CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path])
            XCTAssertEqual(built.status, 0, built.description)
            let calc = out.appendingPathComponent("calc").path
            let trace = out.appendingPathComponent("lines.trace")
            try? FileManager.default.removeItem(at: trace)
            let run = try Command.run(calc, [workload], environment: [
                "CALLTRACE_THRESHOLD": "0", "CALLTRACE_MUTE": "off", "CALLTRACE_OUTPUT": trace.path,
                "LD_LIBRARY_PATH": "",
            ], timeout: 120)
            // The workload's errors give calc exit status 1, traced or not: only the trace matters here.
            XCTAssertTrue(FileManager.default.fileExists(atPath: trace.path), run.description)
            let report = try Command.run(Workspace.cli.path, ["report", trace.path, "--format", "jsonl"], timeout: 120)
            XCTAssertEqual(report.status, 0, report.description)
            var ours: [String: String] = [:]  // function -> file:line (file's base name)
            for line in report.stdout.split(separator: "\n") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let name = object["function"] as? String, ours[name] == nil,
                      let file = object["file"] as? String, let number = object["line"] as? Int else { continue }
                ours[name] = "\((file as NSString).lastPathComponent):\(number)"
            }
            // Entry addresses of the program's own functions.
            let symbols = try Command.run(nm, ["--defined-only", calc])
            var address: [String: String] = [:]
            for line in symbols.stdout.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 3, parts[1] == "T" || parts[1] == "t" { address[String(parts[2])] = String(parts[0]) }
            }
            let names = ours.keys.filter { address[$0] != nil }.sorted()
            XCTAssertGreaterThan(names.count, 10, "\(compiler): functions with lines: \(ours)")
            let answer = try Command.run(addr2line, ["-e", calc] + names.compactMap { address[$0] })
            let theirs = answer.stdout.split(separator: "\n").map { line -> String in
                let location = line.split(separator: " ").first.map(String.init) ?? ""
                let parts = location.split(separator: ":")
                return "\(((parts.first.map(String.init) ?? "") as NSString).lastPathComponent):\(parts.last ?? "")"
            }
            XCTAssertEqual(theirs.count, names.count, answer.description)
            for (name, expected) in zip(names, theirs) {
                XCTAssertEqual(ours[name], expected, "\(compiler): \(name)")
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
}
