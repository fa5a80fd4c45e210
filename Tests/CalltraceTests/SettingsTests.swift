import CalltraceKit
import Foundation
import XCTest

/// Bad CALLTRACE_* settings: one warning each, then the default; an unwritable output runs untraced;
/// a CALLTRACE_* name that is no setting (nor another part of calltrace's) is named once.
final class SettingsTests: XCTestCase {
    func testInvalidSettingWarnsOnceAndUsesTheDefault() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .gcc)
        let cases: [(variable: String, value: String, check: (RecordedTrace) -> Void)] = [
            ("CALLTRACE_THRESHOLD", "fast", { t in
                XCTAssertEqual(t.trace.header.thresholdNs, 10_000_000)
                XCTAssertEqual(t.outline, ["main", "  slow_step"], t.tree) }),
            ("CALLTRACE_THRESHOLD", "-3ms", { t in XCTAssertEqual(t.trace.header.thresholdNs, 10_000_000) }),
            ("CALLTRACE_THREADS", "every", { t in
                XCTAssertFalse(t.trace.header.tracesAllThreads)
                XCTAssertTrue(t.calls(named: "worker_step").isEmpty, t.tree) }),
            ("CALLTRACE_MAX_DEPTH", "0", { t in XCTAssertEqual(t.trace.header.maxDepth, 4096) }),
            ("CALLTRACE_MAX_DEPTH", "9999999999", { t in XCTAssertEqual(t.trace.header.maxDepth, 4096) }),
            ("CALLTRACE_BUFFER", "1k", { t in XCTAssertEqual(t.trace.header.blockSize, 64 << 10) }), // 16M: 256 blocks of 64k
            ("CALLTRACE_BUFFER", "lots", { t in XCTAssertEqual(t.trace.header.blockSize, 64 << 10) }),
        ]
        for (variable, value, check) in cases {
            let (result, url) = try fixture.run(["6"], environment: [variable: value])
            XCTAssertEqual(result.status, 6, "\(variable)=\(value): \(result)")
            XCTAssertEqual(result.stdout, "settings: done\n")
            XCTAssertEqual(result.stderrLines.count, 1, "\(variable)=\(value): one warning:\n\(result.stderr)")
            XCTAssertTrue(result.stderr.contains(variable), "\(variable)=\(value): \(result.stderr)")
            let trace = try RecordedTrace(url)
            check(trace)
        }
    }

    func testInvalidOutputWarnsOnceAndUsesTheDefaultName() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .gcc)
        let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": ""])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("CALLTRACE_OUTPUT"), result.stderr)
        let files = traceFiles(in: fixture.directory)
        XCTAssertEqual(files.count, 1, "\(files)")
        XCTAssertTrue(files.first?.hasPrefix("calltrace-") ?? false, "the default name: \(files)")
        if let name = files.first {
            let trace = try RecordedTrace(fixture.directory.appendingPathComponent(name))
            XCTAssertEqual(name, "calltrace-\(trace.trace.header.pid).trace")
            XCTAssertEqual(trace.outline, ["main", "  slow_step"], trace.tree)
        }
    }

    func testSeveralInvalidSettingsWarnOnceEach() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .clang)
        let bad = ["CALLTRACE_THRESHOLD": "soon", "CALLTRACE_THREADS": "both", "CALLTRACE_MAX_DEPTH": "deep",
                   "CALLTRACE_BUFFER": "4k"]
        let (result, url) = try fixture.run(environment: bad)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stderrLines.count, bad.count, result.stderr)
        for variable in bad.keys {
            XCTAssertEqual(result.stderrLines.filter { $0.contains(variable) }.count, 1, "\(variable): \(result.stderr)")
        }
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.outline, ["main", "  slow_step"], trace.tree)
    }

    func testUnwritableOutputWarnsOnceAndRunsUntraced() throws {
        let output = "/nonexistent/dir/x.trace"
        let settings = try Fixture.build(["settings.c"], compiler: .gcc)
        let plain = try Fixture.build(["settings.c"], compiler: .gcc, wrapper: false, name: "settings_plain")
        let untraced = try Command.run(plain.binary.path, ["7"])
        for threads in ["main", "all"] {
            let (result, _) = try settings.run(["7"], environment: ["CALLTRACE_OUTPUT": output,
                                                                    "CALLTRACE_THREADS": threads])
            XCTAssertEqual(result.status, untraced.status, "\(threads): \(result)")
            XCTAssertEqual(result.stdout, untraced.stdout, threads)
            XCTAssertEqual(result.stderrLines.count, 1, "\(threads): one warning:\n\(result.stderr)")
            XCTAssertTrue(result.stderr.contains(output), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/nonexistent"))

        // A child of fork does not try (and warn) again.
        let fork = try Fixture.build(["fork.c"], compiler: .gcc)
        let (result, _) = try fork.run(environment: ["CALLTRACE_OUTPUT": output])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertNotNil(pid(after: "child", in: result.stdout), result.stdout)
        XCTAssertNotNil(pid(after: "parent", in: result.stdout), result.stdout)
        XCTAssertEqual(result.stderrLines.count, 1, "one warning for parent and child:\n\(result.stderr)")
        XCTAssertEqual(traceFiles(in: fork.directory), [])
    }

    /// The one line the runtime prints about a variable it does not know.
    private static func unknown(_ variable: String, near: String? = nil) -> String {
        "calltrace: warning: \(variable) is not a calltrace setting"
            + (near.map { " (did you mean \($0)?)" } ?? "") + "; it is ignored"
    }

    func testMisspelledSettingWarnsOnceNamingTheSettingItResembles() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .gcc)
        let untraced = try fixture.runUntraced(["6"])
        // Alone, it asks for nothing: the program runs untraced, as before, but no longer silently.
        let alone = try Command.run(fixture.binary.path, ["6"], environment: ["CALLTRACE_TRESHOLD": "1ms"],
                                    currentDirectory: fixture.directory)
        XCTAssertEqual(alone.status, untraced.status, alone.description)
        XCTAssertEqual(alone.stdout, untraced.stdout)
        XCTAssertEqual(alone.stderrLines, [Substring(Self.unknown("CALLTRACE_TRESHOLD", near: "CALLTRACE_THRESHOLD"))],
                       alone.stderr)
        XCTAssertEqual(traceFiles(in: fixture.directory), [], "nothing asked for a trace")

        // Beside real settings: one line each, and the trace is the default threshold's.
        let misspelled = ["CALLTRACE_TRESHOLD": "1ms", "CALLTRACE_threads": "all", "CALLTRACE_HNAG": "5ms",
                          "CALLTRACE_VERBOSE": "1", "CALLTRACE_": "x"]
        let (result, url) = try fixture.run(["6"], environment: misspelled)
        XCTAssertEqual(result.status, 6, result.description)
        XCTAssertEqual(result.stdout, "settings: done\n")
        XCTAssertEqual(Set(result.stderrLines.map(String.init)),
                       [Self.unknown("CALLTRACE_TRESHOLD", near: "CALLTRACE_THRESHOLD"),
                        Self.unknown("CALLTRACE_threads", near: "CALLTRACE_THREADS"),
                        Self.unknown("CALLTRACE_HNAG", near: "CALLTRACE_HANG"),
                        Self.unknown("CALLTRACE_VERBOSE"), Self.unknown("CALLTRACE_")], result.stderr)
        XCTAssertEqual(result.stderrLines.count, misspelled.count, result.stderr)
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.trace.header.thresholdNs, 10_000_000)
        XCTAssertFalse(trace.trace.header.tracesAllThreads)
        XCTAssertEqual(trace.outline, ["main", "  slow_step"], trace.tree)
    }

    func testOtherToolsVariablesAreNotWarnedAbout() throws {
        let table = try String(contentsOf: Workspace.packageRoot
            .appendingPathComponent("CShims/settings/include/ct_settings.inc"), encoding: .utf8)
        func variables(_ macro: String) -> Set<String> {
            Set(table.split(separator: "\n").filter { $0.hasPrefix(macro + "(") }.compactMap {
                $0.split(separator: "\"").dropFirst().first.map(String.init)
            })
        }
        let settings = variables("CT_SETTING"), others = variables("CT_OTHER_VARIABLE")
        XCTAssertEqual(settings.count, 10, table)
        // Every variable the compiler wrappers and record read is a setting or one of the others.
        let pattern = try NSRegularExpression(pattern: "CALLTRACE_[A-Z0-9_]+")
        let readers = ["Scripts/calltrace-cc", "Sources/calltrace/Support/RuntimeLocator.swift",
                       "Sources/CalltraceKit/Symbols/DebugFileLocator.swift", "Tests/CalltraceTests/Support/Workspace.swift"]
        for reader in readers {
            let text = try String(contentsOf: Workspace.packageRoot.appendingPathComponent(reader), encoding: .utf8)
            let names = Set(pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
                Range($0.range, in: text).map { String(text[$0]) }
            })
            XCTAssertFalse(names.isEmpty, reader)
            for name in names {
                XCTAssertTrue(settings.contains(name) || others.contains(name),
                              "\(reader) reads \(name): add it to ct_settings.inc's CT_OTHER_VARIABLE rows")
            }
        }

        let fixture = try Fixture.build(["settings.c"], compiler: .gcc)
        let environment = Dictionary(uniqueKeysWithValues: others.map { ($0, "set") })
        let (result, url) = try fixture.run(["6"], environment: environment)
        XCTAssertEqual(result.status, 6, result.description)
        XCTAssertEqual(result.stdout, "settings: done\n")
        XCTAssertEqual(result.stderr, "", "no word about \(others.sorted())")
        XCTAssertEqual(try RecordedTrace(url).outline, ["main", "  slow_step"])
    }

    func testForkChildDoesNotWarnAgainAboutAMisspelledSetting() throws {
        let fork = try Fixture.build(["fork.c"], compiler: .gcc)
        let (result, _) = try fork.run(environment: ["CALLTRACE_TRESHOLD": "1ms"])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertNotNil(pid(after: "child", in: result.stdout), result.stdout)
        XCTAssertNotNil(pid(after: "parent", in: result.stdout), result.stdout)
        XCTAssertEqual(result.stderrLines, [Substring(Self.unknown("CALLTRACE_TRESHOLD", near: "CALLTRACE_THRESHOLD"))],
                       "one warning for parent and child:\n\(result.stderr)")
    }

    func testRecordShowsTheRuntimesWarningOnce() throws {
        let plain = try Fixture.build(["settings.c"], compiler: .gcc, wrapper: false, name: "settings_plain")
        let dir = Workspace.directory("settings-misspelled")
        let result = try RecordCommand.run(["-o", "misspelled.trace"], [plain.binary.path, "6"],
                                           environment: ["CALLTRACE_TRESHOLD": "1ms"], in: dir)
        XCTAssertEqual(result.status, 6, result.description)
        XCTAssertEqual(result.stdout, "settings: done\n")
        let warning = Self.unknown("CALLTRACE_TRESHOLD", near: "CALLTRACE_THRESHOLD")
        XCTAssertEqual(result.stderrLines.filter { $0 == warning }.count, 1, result.stderr)
        XCTAssertEqual(result.stderrLines.filter { $0.contains("TRESHOLD") }.count, 1, result.stderr)
        XCTAssertEqual(try RecordedTrace(dir.appendingPathComponent("misspelled.trace")).trace.header.thresholdNs,
                       10_000_000)
    }
}
