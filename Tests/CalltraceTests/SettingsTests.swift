import CalltraceKit
import Foundation
import XCTest

/// Bad CALLTRACE_* settings: one warning each, then the default; an unwritable output runs untraced.
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
}
