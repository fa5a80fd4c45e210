import CalltraceKit
import Foundation
import XCTest

/// `calltrace record` reports and reads the trace the runtime actually wrote, puts it where `-o` (or
/// the default) says, puts the traces of other processes next to it, and leaves nothing else behind.
final class RecordOutputTests: XCTestCase {
    func testDefaultTraceIsNamedForTheProgramsPidInTheCurrentDirectory() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-default")
        let result = try RecordCommand.run([], [fixture.binary.path, "0"], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        let written = try XCTUnwrap(result.recordedTrace, result.stderr)
        XCTAssertTrue(written.hasPrefix("calltrace-") && !written.contains("/"), written)
        XCTAssertEqual(RecordCommand.files(in: dir), [written], "only the program's trace")
        let pid = try tracedPid(dir.appendingPathComponent(written))
        XCTAssertEqual(written, "calltrace-\(pid).trace")
        XCTAssertTrue(result.stderr.contains("(5 calls recorded)"), result.stderr)
    }

    func testDashOReplacesAnExistingFile() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-replace")
        let output = dir.appendingPathComponent("app.trace")
        try Data("an old file".utf8).write(to: output)
        let result = try RecordCommand.run(["-o", output.path], [fixture.binary.path, "0"], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.recordedTrace, output.path, result.stderr)
        let recorded = try RecordedTrace(output)
        XCTAssertEqual(recorded.calls(named: "parse_section").count, 2, recorded.tree)
        XCTAssertEqual(RecordCommand.files(in: dir), ["app.trace"])
    }

    func testDashONamingADirectoryPutsTheDefaultNameInIt() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-into-dir")
        let traces = dir.appendingPathComponent("traces")
        try FileManager.default.createDirectory(at: traces, withIntermediateDirectories: true)
        let result = try RecordCommand.run(["-o", traces.path], [fixture.binary.path, "0"], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        let written = try XCTUnwrap(result.recordedTrace, result.stderr)
        let pid = try tracedPid(URL(fileURLWithPath: written))
        XCTAssertEqual(written, traces.appendingPathComponent("calltrace-\(pid).trace").path)
        XCTAssertEqual(RecordCommand.files(in: traces), ["calltrace-\(pid).trace"])
    }

    func testOutputFromTheEnvironmentNeverReplacesAFileAndTheNoteNamesTheFileWritten() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-env-output")
        let taken = dir.appendingPathComponent("app.trace")
        try Data("someone else's file".utf8).write(to: taken)
        let result = try RecordCommand.run([], [fixture.binary.path, "0"],
                                           environment: ["CALLTRACE_OUTPUT": taken.path], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        let written = dir.appendingPathComponent("app-1.trace")
        XCTAssertEqual(result.recordedTrace, written.path, result.stderr)
        XCTAssertEqual(try Data(contentsOf: taken), Data("someone else's file".utf8), "untouched")
        let recorded = try RecordedTrace(written)
        XCTAssertEqual(recorded.calls(named: "parse_section").count, 2, recorded.tree)
        XCTAssertTrue(result.stderr.contains("(5 calls recorded)"), "counted in the file written:\n\(result.stderr)")
    }

    /// In a container the program gets the same pid run after run: record must neither replace the
    /// older trace of that pid nor read it for the note. A new pid namespace gives pid 2 every time.
    func testARepeatedPidNeitherReplacesNorReportsTheOlderTrace() throws {
        let nested = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let settings = try Fixture.build(["settings.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-same-pid")
        let unshare = try which("unshare")
        func recordInNamespace(_ program: String) throws -> CommandResult {
            var result = CommandResult(status: -1, signal: nil, stdout: "", stderr: "")
            for isolation in [["--user", "--map-root-user"], []] {
                result = try Command.run(unshare, isolation + ["--pid", "--fork", Workspace.cli.path, "record", "--", program],
                                         currentDirectory: dir)
                if !result.stderr.hasPrefix("unshare:") { return result }
            }
            throw XCTSkip("no pid namespace here: \(result.stderr)")
        }
        let first = try recordInNamespace(nested.binary.path)
        XCTAssertEqual(first.status, 0, first.description)
        XCTAssertEqual(first.recordedTrace, "calltrace-2.trace", first.stderr)
        let older = try Data(contentsOf: dir.appendingPathComponent("calltrace-2.trace"))

        let second = try recordInNamespace(settings.binary.path)
        XCTAssertEqual(second.status, 0, second.description)
        XCTAssertEqual(second.recordedTrace, "calltrace-2-1.trace", second.stderr)
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("calltrace-2.trace")), older, "not replaced")
        let newer = try RecordedTrace(dir.appendingPathComponent("calltrace-2-1.trace"))
        XCTAssertEqual(newer.calls(named: "slow_step").count, 1, newer.tree)
        XCTAssertTrue(second.stderr.contains("(\(newer.trace.callCount) call"), "counted in the newer trace:\n\(second.stderr)")
        XCTAssertEqual(RecordCommand.files(in: dir), ["calltrace-2-1.trace", "calltrace-2.trace"])
    }

    func testOutputThatIsNeitherAFileNorADirectoryIsRefusedBeforeRunning() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-bad-output")
        let link = dir.appendingPathComponent("link.trace")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: dir.appendingPathComponent("elsewhere").path)
        let cases = [(link.path, "is a symbolic link; calltrace does not write through links"),
                     ("/dev/null", "exists and is not a regular file or a directory")]
        for (output, message) in cases {
            let result = try RecordCommand.run(["-o", output], [fixture.binary.path, "0"], in: dir)
            XCTAssertEqual(result.status, 1, result.description)
            XCTAssertEqual(result.stdout, "", "the program did not run")
            XCTAssertTrue(result.stderr.hasPrefix("calltrace: error: -o \(output) \(message)"), result.stderr)
        }
        XCTAssertEqual(RecordCommand.files(in: dir), ["link.trace"])
    }

    func testAProgramThatCannotRunLeavesNothingBehind() throws {
        let dir = Workspace.directory("record-not-found")
        let result = try RecordCommand.run([], ["./no-such-program"], in: dir)
        XCTAssertEqual(result.status, 127, result.description)
        XCTAssertEqual(result.stderr, "calltrace: error: ./no-such-program: command not found\n")
        XCTAssertEqual(RecordCommand.files(in: dir), [], "no private directory left")
    }

    func testAnExecedProgramsTraceIsItsLastImagesAndTheEarlierOneLiesNextToIt() throws {
        let fixture = try Fixture.build(["exec.c"], compiler: .clang, wrapper: false)
        let dir = Workspace.directory("record-exec")
        let output = dir.appendingPathComponent("app.trace")
        let result = try RecordCommand.run(["-o", output.path], [fixture.binary.path], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.recordedTrace, output.path, result.stderr)
        let program = try RecordedTrace(output)
        XCTAssertEqual(program.outline, ["main", "  after_exec"], program.tree)
        let others = RecordCommand.files(in: dir).filter { $0 != "app.trace" }
        XCTAssertEqual(others.count, 1, "\(others)")
        let pid = try tracedPid(output)
        XCTAssertEqual(others.first, "calltrace-\(pid).trace", "the image before exec, under its own name")
        let before = try RecordedTrace(dir.appendingPathComponent("calltrace-\(pid).trace"))
        XCTAssertEqual(before.calls(named: "before_exec").count, 1, before.tree)
        XCTAssertTrue(result.stderr.contains("1 more trace") && result.stderr.contains("calltrace-\(pid).trace"),
                      result.stderr)
    }

    func testAChildProcessesTraceGoesNextToTheProgramsUnderItsOwnName() throws {
        let fixture = try Fixture.build(["fork.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-fork")
        let traces = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: traces, withIntermediateDirectories: true)
        let output = traces.appendingPathComponent("app.trace")
        let result = try RecordCommand.run(["-o", output.path], [fixture.binary.path], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        let parent = try RecordedTrace(output)
        XCTAssertEqual(parent.calls(named: "parent_work").count, 1, parent.tree)
        let childLine = try XCTUnwrap(result.stdout.split(separator: "\n").first { $0.hasPrefix("child ") })
        let childName = "calltrace-\(childLine.dropFirst("child ".count)).trace"
        XCTAssertEqual(RecordCommand.files(in: traces), ["app.trace", childName].sorted())
        let child = try RecordedTrace(traces.appendingPathComponent(childName))
        XCTAssertEqual(child.calls(named: "child_work").count, 1, child.tree)
        XCTAssertTrue(result.stderr.contains("1 more trace") && result.stderr.contains(childName), result.stderr)
        XCTAssertEqual(RecordCommand.files(in: dir), ["out"], "nothing else, no private directory left")
    }

    func testNoteStartsOnItsOwnLineAfterAPartialLineOnStderr() throws {
        let fixture = try Fixture.build(["partial_line.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-partial-line")
        let result = try RecordCommand.run(["-o", "app.trace"], [fixture.binary.path], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertTrue(result.stderr.hasPrefix("no newline at the end\ncalltrace: trace written to app.trace ("),
                      result.stderr)
    }

    func testNoteAddsNoBlankLineAfterCompleteLines() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-whole-lines")
        let result = try RecordCommand.run(["-o", "app.trace"], [fixture.binary.path, "0"], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertTrue(result.stderr.hasPrefix("calltrace: trace written to app.trace ("),
                      "stderr (a file) was empty: no newline needed:\n\(result.stderr)")
    }

    func testNoteStartsWithAnEmptyLineWhenStderrIsAPipe() throws {
        let partial = try Fixture.build(["partial_line.c"], compiler: .gcc, wrapper: false)
        let whole = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-pipe")
        // Whether the program's last line ended cannot be known through a pipe: always an empty line.
        for (binary, output) in [(partial.binary, "no newline at the end"), (whole.binary, "nested: done 1499500\n")] {
            let result = try Command.run(try which("sh"), ["-c", "\(Workspace.cli.path) record -o app.trace -- \(binary.path) 0 2>&1 | cat"],
                                         currentDirectory: dir)
            XCTAssertEqual(result.status, 0, result.description)
            XCTAssertTrue(result.stdout.contains(output + "\ncalltrace: trace written to app.trace ("), result.stdout)
        }
    }

    // Waits on the runtime creating no file for a process that runs no instrumented code.
    func testUninstrumentedChildrenLeaveNoTracesAndPrintNothing() throws {
        let fixture = try Fixture.build(["system_loop.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-system-loop")
        let result = try RecordCommand.run(["-o", "app.trace"], [fixture.binary.path, "300"], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stdout, "system_loop: 300 of 300\n")
        XCTAssertEqual(RecordCommand.files(in: dir), ["app.trace"], "one trace, no litter")
        XCTAssertEqual(result.stderrLines, ["calltrace: trace written to app.trace (2 calls recorded)"],
                       "one note, nothing per child:\n\(result.stderr)")
    }

    // Waits on the runtime creating no file for a process that runs no instrumented code.
    func testAnUninstrumentedProgramGetsANoteThatNoTraceWasWritten() throws {
        let dir = Workspace.directory("record-uninstrumented")
        let result = try RecordCommand.run(["-o", "app.trace"], [try which("true")], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertTrue(result.stderr.hasPrefix("calltrace: no trace written by "), result.stderr)
        XCTAssertEqual(RecordCommand.files(in: dir), [])
    }

    /// Paths are bytes, not text: `record -o ../t.trace` from a directory whose name is not UTF-8
    /// (`run\xff`) writes the trace, and `report` reads a trace whose own name is not UTF-8.
    func testRecordAndReportTakePathsThatAreNotUTF8() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let dir = Workspace.directory("record-not-utf8")
        // Foundation cannot spell such a name: the shell makes it from its bytes (printf '\377').
        let record = """
            cd "$1" && mkdir "run$(printf '\\377')" && cd "run$(printf '\\377')" && exec "$2" record -o ../t.trace -- "$3" 0
            """
        let recorded = try Command.run("/bin/sh", ["-c", record, "sh", dir.path, Workspace.cli.path, fixture.binary.path])
        XCTAssertEqual(recorded.status, 0, recorded.description)
        XCTAssertTrue(recorded.stderr.contains("(5 calls recorded)"), recorded.stderr)
        let trace = try RecordedTrace(dir.appendingPathComponent("t.trace"))
        XCTAssertEqual(trace.calls(named: "parse_section").count, 2, trace.tree)
        XCTAssertEqual(RecordCommand.leftovers(in: dir), [])

        let report = """
            cd "$1/run$(printf '\\377')" && mv ../t.trace "t$(printf '\\377').trace" && exec "$2" report "t$(printf '\\377').trace"
            """
        let reported = try Command.run("/bin/sh", ["-c", report, "sh", dir.path, Workspace.cli.path])
        XCTAssertEqual(reported.status, 0, reported.description)
        XCTAssertTrue(reported.stdout.contains("parse_section"), reported.description)
        let moved = FilePath(bytes: Array(dir.path.utf8) + [UInt8(ascii: "/"), 0x72, 0x75, 0x6e, 0xff]
                                + Array("/t".utf8) + [0xff] + Array(".trace".utf8))
        XCTAssertEqual(try TraceReader.read(path: moved).callCount, 5)
    }
}
