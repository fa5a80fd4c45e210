import CalltraceKit
import Foundation
import XCTest

/// The runtime records only when asked, and leaves no litter: a wrapper-built program run without
/// any runtime setting records nothing and creates no file; a process that never runs
/// instrumented code creates no trace even when asked.
final class OnlyWhenAskedTests: XCTestCase {
    /// The runtime's settings, each with a value that asks for recording; CALLTRACE_CC and
    /// CALLTRACE_RUNTIME belong to the compiler wrapper, not to the runtime.
    private static let runtimeSettings = [
        ("CALLTRACE_THRESHOLD", "10ms"), ("CALLTRACE_THREADS", "all"), ("CALLTRACE_MAX_DEPTH", "100"),
        ("CALLTRACE_BUFFER", "16M"), ("CALLTRACE_FRAME", "33ms"),
    ]

    func testProgramRunWithoutSettingsRecordsNothingAndCreatesNoFile() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["nested.c"], compiler: compiler)
            // The wrapper's own variables are not runtime settings.
            let cases: [(String, [String: String])] = [
                ("no setting", [:]),
                ("wrapper variables", compiler.wrapperEnvironment.merging(["CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path]) { a, _ in a }),
            ]
            for (label, environment) in cases {
                let dir = Workspace.directory("unasked-\(compiler)")
                let run = try Command.run(fixture.binary.path, ["3"], environment: environment, currentDirectory: dir,
                                          timeout: 60)
                XCTAssertEqual(run.status, 3, "\(compiler) \(label): \(run)")
                XCTAssertTrue(run.stdout.hasSuffix("nested: done 1499500\n"), "\(compiler) \(label): \(run)")
                XCTAssertEqual(run.stderr, "", "\(compiler) \(label)")
                XCTAssertEqual(directoryListing(dir), [], "\(compiler) \(label): files created by a run that asked for nothing")
            }
            // Fixture.runUntraced, which other tests compare with, is such a run.
            let before = directoryListing(fixture.directory)
            XCTAssertEqual(try fixture.runUntraced(["3"]).status, 3)
            XCTAssertEqual(directoryListing(fixture.directory), before, "\(compiler): runUntraced left a file")
        }
    }

    func testAnyRuntimeSettingAsksForRecording() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        for (variable, value) in Self.runtimeSettings {
            let dir = Workspace.directory("asked-\(variable)")
            let result = try Command.run(fixture.binary.path, [], environment: [variable: value], currentDirectory: dir,
                                         timeout: 60)
            XCTAssertEqual(result.status, 0, "\(variable)=\(value): \(result)")
            let files = traceFiles(in: dir)
            XCTAssertEqual(files.count, 1, "\(variable)=\(value): the default trace: \(directoryListing(dir))")
            guard let name = files.first else { continue }
            let trace = try RecordedTrace(dir.appendingPathComponent(name))
            XCTAssertEqual(name, "calltrace-\(trace.trace.header.pid).trace")
            XCTAssertEqual(trace.outline.first, "main", "\(variable)=\(value):\n\(trace.tree)")
        }
        // CALLTRACE_OUTPUT alone asks too.
        let output = Workspace.directory("asked-output").appendingPathComponent("out.trace")
        let result = try Command.run(fixture.binary.path, [], environment: ["CALLTRACE_OUTPUT": output.path],
                                     currentDirectory: fixture.directory, timeout: 60)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(try RecordedTrace(output).outline.first, "main")
    }

    /// The trace file is made when instrumented code first runs on a recording thread: programs
    /// with the runtime preloaded that run none (a shell, ls, true) leave nothing behind.
    func testProcessThatRunsNoInstrumentedCodeCreatesNoFile() throws {
        try Workspace.requireProducts()
        let preload = ["LD_PRELOAD": Workspace.runtimeLibrary.path, "CALLTRACE_THRESHOLD": "0"]
        let commands: [(String, [String])] = [
            ("/bin/true", []), ("/bin/sh", ["-c", "ls >/dev/null; true"]), ("/bin/sh", ["-c", "exit 3"]),
        ]
        for threads in ["main", "all"] {
            for (program, arguments) in commands {
                let label = "\(program) \(arguments) threads=\(threads)"
                let dir = Workspace.directory("no-litter")
                let plain = try Command.run(program, arguments, currentDirectory: dir, timeout: 60)
                var environment = preload
                environment["CALLTRACE_THREADS"] = threads
                let result = try Command.run(program, arguments, environment: environment, currentDirectory: dir,
                                             timeout: 60)
                XCTAssertEqual(result.status, plain.status, "\(label): \(result)")
                XCTAssertEqual(result.stderr, "", label)
                XCTAssertEqual(directoryListing(dir), [], "\(label): left files behind")
            }
        }
        // With an output name given, too.
        let dir = Workspace.directory("no-litter-named")
        var named = preload
        named["CALLTRACE_OUTPUT"] = dir.appendingPathComponent("x-%p.trace").path
        let result = try Command.run("/bin/sh", ["-c", "ls >/dev/null"], environment: named, currentDirectory: dir,
                                     timeout: 60)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(directoryListing(dir), [], "CALLTRACE_OUTPUT: left files behind")
    }

    private func directoryListing(_ dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
    }
}
