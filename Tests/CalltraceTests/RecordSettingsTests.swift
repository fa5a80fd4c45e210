import CalltraceKit
import Foundation
import XCTest

/// `calltrace record` and the runtime read settings alike: the CLI accepts a value exactly when the
/// runtime does, a setting not given as an option comes from the environment (checked once, by the
/// runtime), and an option wins over the environment.
final class RecordSettingsTests: XCTestCase {
    /// Values per option, valid, invalid and at the edges.
    private static let values: [(option: String, variable: String, values: [String])] = [
        ("--threshold", "CALLTRACE_THRESHOLD",
         ["0", "1.5ms", "99999s", "10", "250us", "100ns", "5.", ".5", "-1", "10 ms", "1e3", "10MS", "", ".", "ms",
          "9999999999999ms", "99999999999999ms", "99999999999999999999", "18446744073709551616ns", "9223372036s"]),
        ("--max-depth", "CALLTRACE_MAX_DEPTH",
         ["0", "1", "4096", "4194304", "4194305", "-1", "1e3", "4096 ", "+5", "99999999999999999999", ""]),
        ("--buffer", "CALLTRACE_BUFFER",
         ["8k", "7k", "8191", "8192", "16M", "16MB", "2G", "1T", "0", "-1", "1e3", "16Mi", "99999999999999999999",
          "1024G", "1025G", ""]),
        ("--threads", "CALLTRACE_THREADS", ["main", "all", "Main", "none", ""]),
    ]

    /// The runtime's verdict: the fixture run with the variable set warns about it, or not.
    private func runtimeAccepts(_ variable: String, _ value: String, fixture: Fixture) throws -> Bool {
        let (result, _) = try fixture.run(environment: [variable: value], traceName: "verdict")
        XCTAssertEqual(result.stdout, "settings: done\n", "\(variable)=\(value)")
        return !result.stderr.contains("calltrace: warning: \(variable)=")
    }

    func testRecordAcceptsAValueExactlyWhenTheRuntimeDoes() throws {
        let runtimeBuilt = try Fixture.build(["settings.c"], compiler: .gcc)
        let plain = try Fixture.build(["settings.c"], compiler: .gcc, wrapper: false, name: "settings_plain")
        let dir = Workspace.directory("settings-agreement")
        for (option, variable, values) in Self.values {
            for value in values {
                let label = "\(option) '\(value)'"
                let runtime = try runtimeAccepts(variable, value, fixture: runtimeBuilt)
                let result = try RecordCommand.run(["-o", "agree.trace", option, value], [plain.binary.path], in: dir)
                let cli = result.status != 64
                XCTAssertEqual(cli, runtime, "\(label): the CLI \(cli ? "accepts" : "refuses") it, the runtime "
                               + "\(runtime ? "accepts" : "refuses") it:\n\(result)")
                if cli {
                    XCTAssertEqual(result.status, 0, "\(label):\n\(result)")
                    XCTAssertFalse(result.stderr.contains("warning"), "\(label): the runtime took it as given:\n\(result)")
                } else {
                    XCTAssertTrue(result.stderr.contains("Error: \(option)"), "\(label): the message names the option:\n\(result)")
                    XCTAssertEqual(result.stdout, "", "\(label): nothing ran")
                }
            }
        }
        // Spot checks that the list has both verdicts where the issue says so.
        XCTAssertFalse(try runtimeAccepts("CALLTRACE_THRESHOLD", "-1", fixture: runtimeBuilt))
        XCTAssertTrue(try runtimeAccepts("CALLTRACE_THRESHOLD", "99999s", fixture: runtimeBuilt))
        XCTAssertTrue(try runtimeAccepts("CALLTRACE_MAX_DEPTH", "4194304", fixture: runtimeBuilt))
        XCTAssertFalse(try runtimeAccepts("CALLTRACE_MAX_DEPTH", "4194305", fixture: runtimeBuilt))
    }

    func testOptionValueIsTheOneTheTraceRecordsWith() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("settings-option")
        let result = try RecordCommand.run(["-o", "big.trace", "-t", "99999s", "--max-depth", "4194304"],
                                           [fixture.binary.path], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        let header = try TraceReader.read(path: dir.appendingPathComponent("big.trace").path).header
        XCTAssertEqual(header.thresholdNs, 99_999_000_000_000, "not replaced by the default")
        XCTAssertEqual(header.maxDepth, 4_194_304)
        XCTAssertTrue(result.stderr.contains("no call lasted 99999s or more"), result.stderr)
    }

    func testWithoutAnOptionTheEnvironmentsSettingApplies() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("settings-environment")
        let result = try RecordCommand.run(["-o", "env.trace"], [fixture.binary.path],
                                           environment: ["CALLTRACE_THRESHOLD": "3ms", "CALLTRACE_MAX_DEPTH": "77"], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        let trace = try RecordedTrace(dir.appendingPathComponent("env.trace"))
        XCTAssertEqual(trace.trace.header.thresholdNs, 3_000_000)
        XCTAssertEqual(trace.trace.header.maxDepth, 77)
        XCTAssertEqual(trace.calls(named: "fast_step").count, 1, "4 ms is over 3 ms:\n\(trace.tree)")

        let threads = try RecordCommand.run(["-o", "threads.trace"], [fixture.binary.path],
                                            environment: ["CALLTRACE_THREADS": "all"], in: dir)
        XCTAssertEqual(threads.status, 0, threads.description)
        let header = try TraceReader.read(path: dir.appendingPathComponent("threads.trace").path).header
        XCTAssertEqual(header.threadsMode, 1, "all threads")
    }

    func testAnOptionWinsOverTheEnvironmentAndTheEnvironmentAppliesToTheRest() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("settings-override")
        let environment = ["CALLTRACE_THRESHOLD": "3ms", "CALLTRACE_THREADS": "all", "CALLTRACE_MAX_DEPTH": "77"]
        let result = try RecordCommand.run(["-o", "option.trace", "-t", "10ms", "--threads", "main"],
                                           [fixture.binary.path], environment: environment, in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        let trace = try RecordedTrace(dir.appendingPathComponent("option.trace"))
        XCTAssertEqual(trace.trace.header.thresholdNs, 10_000_000, "the option wins")
        XCTAssertEqual(trace.trace.header.threadsMode, 0, "the option wins")
        XCTAssertEqual(trace.trace.header.maxDepth, 77, "the environment still applies to the rest")
        XCTAssertEqual(trace.calls(named: "slow_step").count, 1, trace.tree)
        XCTAssertEqual(trace.calls(named: "fast_step").count, 0, trace.tree)
        XCTAssertEqual(trace.calls(named: "worker_step").count, 0, trace.tree)
    }

    func testAnInvalidSettingInTheEnvironmentWarnsOnceAndTheDefaultApplies() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("settings-invalid-environment")
        let result = try RecordCommand.run(["-o", "app.trace"], [fixture.binary.path],
                                           environment: ["CALLTRACE_THRESHOLD": "10 ms"], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        let warnings = result.stderrLines.filter { $0.contains("CALLTRACE_THRESHOLD") }
        XCTAssertEqual(warnings, ["calltrace: warning: CALLTRACE_THRESHOLD=10 ms is not valid (expected a duration "
                                  + "such as 10ms, 250us, 1.5s or 0); using the default, 10ms"], result.stderr)
        let header = try TraceReader.read(path: dir.appendingPathComponent("app.trace").path).header
        XCTAssertEqual(header.thresholdNs, 10_000_000)
    }

    func testAnInvalidOutputInTheEnvironmentWarnsOnceInTheRuntimesWords() throws {
        let fixture = try Fixture.build(["settings.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("settings-invalid-output")
        let result = try RecordCommand.run([], [fixture.binary.path], environment: ["CALLTRACE_OUTPUT": ""], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stderrLines.filter { $0.contains("warning") },
                       ["calltrace: warning: CALLTRACE_OUTPUT= is not valid (expected a file path); "
                        + "using the default, calltrace-%p.trace"], result.stderr)
        let written = try XCTUnwrap(result.recordedTrace, result.stderr)
        XCTAssertTrue(written.hasPrefix("calltrace-"), written)
    }
}
