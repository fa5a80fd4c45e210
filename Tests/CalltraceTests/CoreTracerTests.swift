import CalltraceKit
import Foundation
import XCTest

/// The spine: instrument, record slow main-thread calls, read the cost tree.
final class CoreTracerTests: XCTestCase {
    func testNestedSlowCallsFormTheKnownTree() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["nested.c"], compiler: compiler)
            let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.outline, ["main", "  load_config", "    parse_section", "    parse_section",
                                           "  draw_frame"], "\(compiler):\n\(trace.tree)")
            let sections = trace.calls(named: "parse_section")
            assertCost(sections.first, atLeastMs: 12, below: 500, in: trace)
            assertCost(sections.last, atLeastMs: 12, below: 500, in: trace)
            assertCost(trace.calls(named: "load_config").first, atLeastMs: 38, below: 800, in: trace)
            assertCost(trace.calls(named: "draw_frame").first, atLeastMs: 20, below: 500, in: trace)
            assertCost(trace.calls(named: "main").first, atLeastMs: 58, below: 1500, in: trace)
            XCTAssertTrue(trace.calls.allSatisfy { !$0.unfinished && !$0.unwound }, trace.tree)
            XCTAssertTrue(trace.trace.header.closedCleanly)
        }
    }

    func testCallsUnderTheThresholdAreAbsent() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        // load_config lasts at least 38 ms; parse_section 12 and draw_frame 20, well under 35 even
        // on a busy machine.
        let (_, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "35ms"])
        let trace = try RecordedTrace(url)
        XCTAssertTrue(trace.calls(named: "quick").isEmpty, trace.tree)
        XCTAssertTrue(trace.calls(named: "parse_section").isEmpty, "12 ms calls under a 35 ms threshold:\n\(trace.tree)")
        XCTAssertEqual(trace.outline, ["main", "  load_config"], trace.tree)
    }

    func testThresholdZeroRecordsEveryCall() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .clang)
        let (_, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0"])
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.calls(named: "quick").count, 1000, trace.outline.prefix(20).joined(separator: "\n"))
        XCTAssertTrue(trace.calls(named: "quick").allSatisfy { $0.depth == 1 })
    }

    func testCxxNamesAreDemangled() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["names.cpp"], compiler: compiler, cxx: true)
            let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "5ms"])
            XCTAssertEqual(result.stdout, "2 3.0 3 4.0\n")
            let names = Set(try RecordedTrace(url).calls.map(\.name))
            for expected in ["app::io::Loader<int>::load(int)", "app::io::Loader<double>::load(double)",
                             "app::render(int)", "app::render(double)", "main"] {
                XCTAssertTrue(names.contains(expected), "\(compiler): \(expected) not in \(names.sorted())")
            }
        }
    }

    func testPieAndNonPieBinariesSymbolicate() throws {
        for (flags, label) in [(["-O2", "-fPIE", "-pie"], "pie"), (["-O2", "-fno-pie", "-no-pie"], "nopie")] {
            let fixture = try Fixture.build(["nested.c"], compiler: .gcc, flags: flags, name: "nested-\(label)")
            let (_, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.outline.first, "main", "\(label):\n\(trace.tree)")
            XCTAssertEqual(trace.calls(named: "parse_section").count, 2, "\(label):\n\(trace.tree)")
        }
    }

    func testTracedProgramKeepsItsOutputAndExitStatus() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false)
        let plain = try Command.run(fixture.binary.path, ["7"])
        let (traced, _) = try fixture.run(["7"], environment: [
            "LD_PRELOAD": Workspace.runtimeLibrary.path, "CALLTRACE_THRESHOLD": "10ms"])
        XCTAssertEqual(plain.status, 7)
        XCTAssertEqual(traced.status, 7)
        XCTAssertEqual(traced.stdout, plain.stdout)
        XCTAssertEqual(traced.stderr, "", "the runtime prints nothing when all is well")
    }

    func testRecordRunsAPlainInstrumentedBinary() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .clang, wrapper: false)
        let trace = fixture.directory.appendingPathComponent("app.trace")
        let result = try calltrace(["record", "-t", "10ms", "-o", trace.path, "--",
                                                          fixture.binary.path, "3"])
        XCTAssertEqual(result.status, 3, result.description)
        XCTAssertTrue(result.stdout.hasSuffix("nested: done 1499500\n"), result.stdout)
        XCTAssertTrue(result.stderr.contains(trace.path), result.stderr)
        let recorded = try RecordedTrace(trace)
        XCTAssertEqual(recorded.outline, ["main", "  load_config", "    parse_section", "    parse_section",
                                          "  draw_frame"], recorded.tree)
    }

    func testRecordReportsDeathBySignalAs128PlusN() throws {
        let fixture = try Fixture.build(["killed.c"], compiler: .gcc, wrapper: false)
        let trace = fixture.directory.appendingPathComponent("killed.trace")
        let result = try calltrace(["record", "-t", "10ms", "-o", trace.path, "--",
                                                          fixture.binary.path])
        XCTAssertEqual(result.status, 128 + SIGKILL, result.description)
    }

    func testRecordsCompletedBeforeSigkillAreReadable() throws {
        let fixture = try Fixture.build(["killed.c"], compiler: .clang)
        let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        XCTAssertEqual(result.signal, SIGKILL)
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.calls(named: "step").count, 3, trace.tree)
        XCTAssertFalse(trace.trace.header.closedCleanly)
        XCTAssertFalse(trace.trace.warnings.isEmpty, "a killed trace says so")
    }

    func testExitFromDeepInsideRecordsOpenCallsAsUnfinished() throws {
        let fixture = try Fixture.build(["exit_deep.c"], compiler: .gcc)
        let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        XCTAssertEqual(result.status, 5)
        XCTAssertEqual(result.stdout, "leaving from inner\n")
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.outline, ["main", "  outer", "    inner"], trace.tree)
        XCTAssertTrue(trace.calls.allSatisfy(\.unfinished), trace.tree)
        assertCost(trace.calls(named: "inner").first, atLeastMs: 15, below: 500, in: trace)
        assertCost(trace.calls(named: "outer").first, atLeastMs: 17, below: 500, in: trace)
    }

    func testWrapperHandlesCompileOnlyLinkAndSharedSteps() throws {
        try Workspace.requireProducts()
        for compiler in Compiler.allCases {
            let dir = Workspace.directory("twofile-\(compiler)")
            let src = Workspace.fixtures.appendingPathComponent("twofile")
            let env = compiler.wrapperEnvironment.merging(["CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path]) { a, _ in a }
            let cc = Workspace.compilerWrapper.path
            func step(_ args: [String]) throws {
                let r = try Command.run(cc, args, environment: env, currentDirectory: dir)
                XCTAssertEqual(r.status, 0, "\(compiler) \(args): \(r)")
            }
            try step(["-O2", "-c", src.appendingPathComponent("app.c").path, "-o", "app.o"])
            try step(["-O2", "-fPIC", "-shared", src.appendingPathComponent("util.c").path, "-o", "libutil.so"])
            try step(["app.o", "-L.", "-lutil", "-Wl,-rpath,\(dir.path)", "-o", "app"])
            let carried = try Instrumentation.carries(dir.appendingPathComponent("app.o"), compiler)
            XCTAssertTrue(carried.instrumented, "compile-only step instruments (\(compiler.instrument)):\n\(carried.evidence)")
            let trace = dir.appendingPathComponent("app.trace")
            let run = try Command.run(dir.appendingPathComponent("app").path, [],
                                      environment: ["CALLTRACE_OUTPUT": trace.path, "CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(run.stdout, "twofile: done\n")
            let recorded = try RecordedTrace(trace)
            XCTAssertEqual(recorded.outline, ["main", "  app_step", "    util_slow"], "\(compiler):\n\(recorded.tree)")
        }
    }

    func testReportJSONLinesCarryTheRecordFields() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        let (_, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        let result = try calltrace(["report", url.path, "--format", "jsonl"])
        XCTAssertEqual(result.status, 0, result.description)
        let lines = result.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 5, result.stdout)
        let now = Date().timeIntervalSince1970
        var functions: [String] = []
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let record = try XCTUnwrap(object, String(line))
            functions.append(try XCTUnwrap(record["function"] as? String))
            let cost = try XCTUnwrap(record["cost"] as? Double)
            XCTAssertGreaterThanOrEqual(cost, 10, String(line))
            let time = try XCTUnwrap(record["time"] as? Double)
            XCTAssertLessThan(abs(time - now), 600, "time is unix seconds when the call ended: \(line)")
            XCTAssertNotNil(record["depth"] as? Int, String(line))
            XCTAssertNotNil(record["thread"] as? Int, String(line))
        }
        XCTAssertEqual(functions, ["parse_section", "parse_section", "load_config", "draw_frame", "main"],
                       "one line per call, in the order the calls ended")
    }

    func testInfoSummarisesTheTrace() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .clang)
        let (_, url) = try fixture.run(["4"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
        let info = try calltrace(["info", url.path])
        XCTAssertEqual(info.status, 0, info.description)
        let pid = try RecordedTrace(url).trace.header.pid
        for expected in [fixture.binary.path, "pid:", "\(pid)", "threshold", "10ms", "main entered", "libc.so.6"] {
            XCTAssertTrue(info.stdout.contains(expected), "info lacks \(expected):\n\(info.stdout)")
        }
        let fields = Dictionary(info.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return (parts[0].trimmingCharacters(in: .whitespaces), parts[1].trimmingCharacters(in: .whitespaces))
        }, uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(fields["records"], "5", info.stdout)
        XCTAssertEqual(fields["drops"], "0", info.stdout)
    }
}
