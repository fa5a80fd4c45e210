@testable import CalltraceKit
import Foundation
import XCTest

/// `top`, `diff` and `check` through the built CLI on synthetic traces: files and directories of
/// runs, exit statuses, and one-line errors for bad input.
final class RegressionCommandTests: XCTestCase {
    typealias R = SyntheticRuns


    /// A directory holding `traces` as 1.trace, 2.trace ... and a file that is not a trace.
    private func runs(_ name: String, _ traces: [SyntheticTrace]) throws -> URL {
        let directory = Workspace.directory(name)
        for (index, trace) in traces.enumerated() {
            try Data(trace.bytes).write(to: directory.appendingPathComponent("\(index + 1).trace"))
        }
        try Data("notes".utf8).write(to: directory.appendingPathComponent("README"))
        return directory
    }

    private func budget(_ text: String, named name: String) throws -> String {
        let url = Workspace.directory("budgets").appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func testTopReadsADirectoryOfRunsAsTheViewDoes() throws {
        let directory = try runs("top-runs", [R.base, R.new])
        let result = try calltrace(["top", directory.path])
        XCTAssertEqual(result.status, 0, result.description)
        let expected = TopTextView.text(ViewInput([try R.profile(R.base), try R.profile(R.new)]),
                                        options: { var o = ViewOptions(); o.limit = 30; return o }())
        XCTAssertEqual(result.stdout, expected)
        XCTAssertEqual(result.stderr, "")
        let json = try calltrace(["top", directory.appendingPathComponent("1.trace").path, "--format", "json",
                            "--sort", "calls", "--limit", "1"])
        XCTAssertEqual(json.status, 0, json.description)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((document["functions"] as? [[String: Any]])?.count, 1)
        XCTAssertEqual(document["omitted"] as? Int, 3)
    }

    func testDiffReportsAndExitsZero() throws {
        let base = try runs("diff-base", [R.base, R.base])
        let new = try runs("diff-new", [R.new])
        let result = try calltrace(["diff", base.path, new.path, "--noise", "10%", "--noise-floor", "1ms"])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertTrue(result.stdout.hasPrefix("base: 2 runs of app; new: 1 run of app; per-run means in ms; "
                                              + "noise: 10.0% and 1.00 ms\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("regressions\n       50.00       72.00     +22.00    +44.0%"), result.stdout)
        let json = try calltrace(["diff", base.path, new.path, "--format", "json", "--all"])
        XCTAssertEqual(json.status, 0, json.description)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((document["functions"] as? [[String: Any]])?.count, 5)
        let bad = try calltrace(["diff", base.path, new.path, "--noise", "five"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("--noise 'five' is not valid: expected a share such as 5% or 0.05"), bad.stderr)
    }

    /// `check --junit FILE`: one test suite per trace, one test case per budget line, failures with
    /// the measured value and the limit, skipped lines with the reason; read back with Python's XML
    /// parser, as a CI's reporter would.
    func testCheckWritesAJUnitReport() throws {
        let directory = try runs("check-junit", [R.base, R.new])
        let strict = try budget("[calls]\n\"0x2000\" = \"50ms\"\nload_assets = \"1ms\"\n\"0x1000\" = \"200ms\"\n",
                                named: "junit.toml")
        let report = directory.appendingPathComponent("report.xml")
        let failed = try calltrace(["check", "--budget", strict, "--junit", report.path, directory.path])
        XCTAssertEqual(failed.status, 1, failed.description)
        let script = """
            import sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            print(root.tag, root.get("tests"), root.get("failures"), root.get("skipped"))
            for suite in root:
                print(suite.tag, suite.get("name").rsplit("/", 1)[-1], suite.get("tests"), suite.get("failures"), suite.get("skipped"))
                for case in suite:
                    outcome = [(child.tag, child.get("message").rsplit("/", 1)[-1]) for child in case]
                    print(" ", case.tag, case.get("classname"), case.get("name"), case.get("time"), outcome)
            """
        let parsed = try Command.run(try which("python3"), ["-c", script, report.path])
        XCTAssertEqual(parsed.status, 0, parsed.description)
        XCTAssertEqual(parsed.stdout, """
            testsuites 6 1 2
            testsuite 1.trace 3 0 1
              testcase calltrace.check calls: 0x1000 at most 200 ms 0.100000 []
              testcase calltrace.check calls: 0x2000 at most 50 ms 0.040000 []
              testcase calltrace.check calls: load_assets at most 1 ms None [('skipped', '1.trace: load_assets has no recorded call (it did not run)')]
            testsuite 2.trace 3 1 1
              testcase calltrace.check calls: 0x1000 at most 200 ms 0.120000 []
              testcase calltrace.check calls: 0x2000 at most 50 ms 0.062000 [('failure', '2.trace: 0x2000 took 62.00 ms, budget 50 ms (1 of 2 calls over)')]
              testcase calltrace.check calls: load_assets at most 1 ms None [('skipped', '2.trace: load_assets has no recorded call (it did not run)')]

            """)
        // Within budget, the report is written too, and says so.
        let loose = try budget("[calls]\n\"0x2000\" = \"70ms\"\n", named: "junit-loose.toml")
        let passed = try calltrace(["check", "--budget", loose, "--junit", report.path, directory.path])
        XCTAssertEqual(passed.status, 0, passed.description)
        let xml = try String(contentsOf: report, encoding: .utf8)
        XCTAssertTrue(xml.contains("<testsuites name=\"calltrace check\" tests=\"2\" failures=\"0\" skipped=\"0\">"), xml)
    }

    func testCheckPassesFailsAndRejectsBadBudgets() throws {
        let directory = try runs("check-runs", [R.base, R.new])
        let strict = try budget("[calls]\n\"0x2000\" = \"50ms\"\nload_assets = \"1ms\"\n", named: "strict.toml")
        let failed = try calltrace(["check", "--budget", strict, directory.path])
        XCTAssertEqual(failed.status, 1, failed.description)
        XCTAssertEqual(failed.stdout, "\(directory.path)/2.trace: 0x2000 took 62.00 ms, budget 50 ms (1 of 2 calls over)\n")
        XCTAssertTrue(failed.stderr.contains("calltrace: warning: \(directory.path)/1.trace: load_assets has no recorded call"),
                      failed.stderr)

        let loose = try budget("[calls]\n\"0x2000\" = \"70ms\"\n", named: "loose.toml")
        let passed = try calltrace(["check", "--budget", loose, directory.appendingPathComponent("1.trace").path,
                              directory.appendingPathComponent("2.trace").path])
        XCTAssertEqual(passed.status, 0, passed.description)
        XCTAssertEqual(passed.stdout, "ok: 2 traces within budget (1 limit)\n")
        XCTAssertEqual(passed.stderr, "")

        let bad = try budget("[calls]\n\"0x2000\" = \"50 parsecs\"\n", named: "bad.toml")
        let rejected = try calltrace(["check", "--budget", bad, directory.path])
        XCTAssertEqual(rejected.status, 2, rejected.description)
        XCTAssertEqual(rejected.stdout, "")
        XCTAssertEqual(rejected.stderr, "calltrace: error: \(bad): [calls] 0x2000: '50 parsecs' is not a duration "
                                        + "such as 10ms, 250us, 1.5s or 0\n")

        let missing = try calltrace(["check", "--budget", "/nonexistent/budget.toml", directory.path])
        XCTAssertEqual(missing.status, 2, missing.description)
        XCTAssertEqual(missing.stderr.split(separator: "\n").count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.hasPrefix("calltrace: error: /nonexistent/budget.toml: cannot read"), missing.stderr)

        let unreadable = try calltrace(["check", "--budget", loose, directory.appendingPathComponent("README").path])
        XCTAssertEqual(unreadable.status, 2, unreadable.description)
        XCTAssertEqual(unreadable.stderr.split(separator: "\n").count, 1, unreadable.stderr)
    }

    /// A missing file, an empty directory and a file that is not a trace: one error line each, no
    /// output, a non-zero exit, for every command.
    func testBadInputsGiveOneLineErrors() throws {
        let empty = Workspace.directory("no-runs")
        let notATrace = empty.appendingPathComponent("notes.txt")
        try Data("not a trace, just words\n".utf8).write(to: notATrace)
        let loose = try budget("[calls]\nx = \"70ms\"\n", named: "any.toml")
        for input in ["/nonexistent/run.trace", empty.path, notATrace.path] {
            for command in [["top", input], ["diff", input, input], ["check", "--budget", loose, input]] {
                let result = try calltrace(command)
                XCTAssertNotEqual(result.status, 0, "\(command): \(result)")
                XCTAssertEqual(result.stdout, "", "\(command)")
                XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "\(command): \(result.stderr)")
                XCTAssertTrue(result.stderr.hasPrefix("calltrace: error: "), "\(command): \(result.stderr)")
            }
        }
    }

    /// Marks and frames of a real program (Fixtures/marks.c: "ready" after 20 ms of sleep, 20 frames
    /// 5 ms apart but for two of 50 ms, each dropping two or more frames at the default 16.67 ms).
    func testCheckHoldsMarksAndFramesOfARealTrace() throws {
        let fixture = try Fixture.build(["marks.c"], compiler: .gcc)
        let (_, url) = try fixture.run()
        let strict = try budget("[marks]\nready = \"5ms\"\nnever = \"1s\"\n[frames]\nmax_dropped_at_once = 1\n"
                                + "max_drop_events = 1\n", named: "frames-strict.toml")
        let failed = try calltrace(["check", "--budget", strict, url.path])
        XCTAssertEqual(failed.status, 1, failed.description)
        let lines = failed.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, failed.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(url.path): mark \"ready\" came at ") && $0.hasSuffix(" ms, budget 5 ms") },
                      failed.stdout)
        XCTAssertTrue(lines.contains("\(url.path): mark \"never\" never came, budget 1000 ms"), failed.stdout)
        XCTAssertTrue(lines.contains { $0.contains(" frames dropped at once at ") && $0.hasSuffix(", budget 1") },
                      failed.stdout)
        XCTAssertTrue(lines.contains { $0.contains(" drop events, budget 1") }, failed.stdout)

        let loose = try budget("[marks]\nready = \"10s\"\n[frames]\nmax_dropped_at_once = 100\nmax_drop_events = 19\n",
                               named: "frames-loose.toml")
        let passed = try calltrace(["check", "--budget", loose, url.path])
        XCTAssertEqual(passed.status, 0, passed.description)
        XCTAssertEqual(passed.stdout, "ok: 1 trace within budget (3 limits)\n")
    }
}
