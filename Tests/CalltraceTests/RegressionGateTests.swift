@testable import CalltraceKit
import Foundation
import XCTest

/// `check NEW --baseline BASE --max-regression 20%`: a slowdown past the tolerance fails only when
/// `diff` would call it a regression (several runs a side: the Mann-Whitney U test); too few runs
/// fall back to the plain ratio with a warning. Goldens on synthetic runs, then a real program
/// traced at two settings through the CLI, with its JUnit and Markdown reports.
final class RegressionGateTests: XCTestCase {
    typealias R = SyntheticRuns

    /// One run: main (0x1000) with load (0x2000) and 0x3000 beneath it, in ms, the program's exit
    /// at `exit` ms (nil: the trace has none).
    private func run(main: Double, load: Double, other: Double, exit: Double?) throws -> Profile {
        var profile = try R.profile(R.trace([R.call(0x2000, 1, load), R.call(0x3000, 50, other),
                                             R.call(0x1000, 0, main, depth: 0)]))
        profile.ended = exit.map { Instant(nanoseconds: Int64($0 * 1e6)) }
        return profile
    }

    /// Five runs a side (the p-values of DiffViewTests, from SciPy): main +20% (p = 0.008), the
    /// whole run (exit 5 ms after main) +19.0% (p = 0.008), load +0.15% (p = 1), 0x3000 +37.4% but
    /// p = 0.548 (its runs vary by 65-80%).
    private func fiveRunsASide(tolerance: Double, exits: Bool = true) throws -> RegressionGate.Verdict {
        var gate = RegressionGate(tolerance: tolerance)
        for (main, (load, other)) in zip([100.0, 101, 99, 102, 98], zip([40, 41, 39, 40.5, 39.5], [10.0, 30, 12, 28, 11])) {
            gate.addBaseline(try run(main: main, load: load, other: other, exit: exits ? main + 5 : nil))
        }
        for (main, (load, other)) in zip([120.0, 119, 121, 118, 122], zip([40.2, 39.8, 40.1, 39.9, 40.3], [20.0, 40, 5, 35, 25])) {
            gate.add(try run(main: main, load: load, other: other, exit: main + 5))
        }
        XCTAssertNil(gate.programMismatch)
        return gate.verdict(name: "new against base")
    }

    func testASignificantSlowdownPastTheToleranceFails() throws {
        let verdict = try fiveRunsASide(tolerance: 0.15)
        XCTAssertEqual(verdict.check.violations, [
            "new against base: the whole run took 125.00 ms per run, baseline 105.00 ms: +19.0% (p = 0.008), over the 15% allowed",
            "new against base: 0x1000 took 120.00 ms per run, baseline 100.00 ms: +20.0% (p = 0.008), over the 15% allowed",
        ])
        XCTAssertEqual(verdict.check.warnings, [])
        XCTAssertEqual(verdict.check.outcomes.map(\.name), [
            "regression: the whole run at most 15% slower", "regression: 0x1000 at most 15% slower",
            "regression: 0x2000 at most 15% slower", "regression: 0x3000 at most 15% slower",
        ], "the whole run, then every function both sides recorded, regressions first")
        XCTAssertEqual(verdict.check.outcomes[3], .init(name: "regression: 0x3000 at most 15% slower",
                                                        measured: Nanoseconds(25_000_000), result: .passed),
                       "+37% that the runs' spread cannot tell from chance passes, as diff shows it with ~")
        // The whole run (+19.0%) is within 19.5%; main (+20.0%) is not: each line on its own.
        XCTAssertEqual(try fiveRunsASide(tolerance: 0.195).check.violations, [
            "new against base: 0x1000 took 120.00 ms per run, baseline 100.00 ms: +20.0% (p = 0.008), over the 19.5% allowed",
        ])
    }

    func testWithinTheTolerancePassesAndSaysWhatWasCompared() throws {
        let verdict = try fiveRunsASide(tolerance: 0.25)
        XCTAssertTrue(verdict.check.passed, "\(verdict.check.violations)")
        XCTAssertEqual(verdict.summary, "new against base: nothing more than 25% slower (the whole run and 3 functions; "
                                        + "5 runs against 5, Mann-Whitney U test at p < 0.05)")
    }

    /// The same runs on both sides: nothing changed, p = 1 everywhere, even at 0%.
    func testRunsAgainstThemselvesPass() throws {
        var gate = RegressionGate(tolerance: 0)
        for main in [100.0, 101, 99, 102, 98] {
            let profile = try run(main: main, load: 40, other: 10, exit: main + 5)
            gate.addBaseline(profile)
            gate.add(profile)
        }
        let verdict = gate.verdict(name: "runs against runs")
        XCTAssertEqual(verdict.check.violations, [])
        XCTAssertEqual(verdict.check.outcomes.count, 4)
    }

    /// One run a side: no test is possible. A warning says how many runs it needs, and the plain
    /// ratio decides: main's +20% is over 10%, the whole run's +19.0% too, 0x3000's +100% as well.
    func testOneRunASideFallsBackToTheRatioWithAWarning() throws {
        var gate = RegressionGate(tolerance: 0.10)
        gate.addBaseline(try run(main: 100, load: 40, other: 10, exit: 105))
        gate.add(try run(main: 120, load: 40.5, other: 20, exit: 125))
        let verdict = gate.verdict(name: "b against a")
        XCTAssertEqual(verdict.check.warnings, [
            "b against a: not enough runs for a significance test (need 4 per side at --alpha 0.05, have 1 run against 1): "
                + "a plain ratio decides, and one run's noise can pass or fail the gate",
        ])
        XCTAssertEqual(verdict.check.violations, [
            "b against a: the whole run took 125.00 ms per run, baseline 105.00 ms: +19.0% (by ratio: too few runs for a test), over the 10% allowed",
            "b against a: 0x1000 took 120.00 ms per run, baseline 100.00 ms: +20.0% (by ratio: too few runs for a test), over the 10% allowed",
            "b against a: 0x3000 took 20.00 ms per run, baseline 10.00 ms: +100.0% (by ratio: too few runs for a test), over the 10% allowed",
        ])
        // Three a side cannot reach p < 0.05 either (0.1 at best).
        var three = RegressionGate(tolerance: 0.10)
        for main in [100.0, 101, 99] { three.addBaseline(try run(main: main, load: 40, other: 10, exit: main + 5)) }
        for main in [105.0, 104, 106] { three.add(try run(main: main, load: 40, other: 10, exit: main + 5)) }
        let few = three.verdict(name: "b against a")
        XCTAssertEqual(few.check.warnings.first?.contains("(need 4 per side at --alpha 0.05, have 3 runs against 3)"), true,
                       "\(few.check.warnings)")
        XCTAssertEqual(few.check.violations, [], "+5% is within 10% by ratio")
        XCTAssertTrue(few.summary.hasSuffix("(the whole run and 3 functions; 3 runs against 3, by ratio: too few runs for a test)"),
                      few.summary)
        XCTAssertEqual(RegressionGate.runsNeeded(0.01), 5, "2/252 = 0.0079 is the first under 0.01")
    }

    /// A function only NEW recorded is not held to the tolerance (no ratio to nothing); a run
    /// without its exit leaves the whole run out, as a skipped line with the reason.
    func testNewFunctionsAndRunsWithoutAnExit() throws {
        var gate = RegressionGate(tolerance: 0.10)
        gate.addBaseline(try run(main: 100, load: 40, other: 10, exit: nil))
        gate.add(try R.profile(R.trace([R.call(0x4000, 1, 50), R.call(0x1000, 0, 100, depth: 0)])))
        let verdict = gate.verdict(name: "b against a")
        XCTAssertEqual(verdict.check.violations, [])
        XCTAssertEqual(verdict.check.outcomes.map(\.name), ["regression: the whole run at most 10% slower",
                                                            "regression: 0x1000 at most 10% slower"])
        XCTAssertEqual(verdict.check.outcomes[0].result, .skipped("b against a: the whole run is not compared: 2 runs did "
                                                                  + "not record the program's exit (killed, or still running)"))
    }

    func testRunsOfAnotherProgramAreNamed() throws {
        var gate = RegressionGate(tolerance: 0.2)
        gate.addBaseline(try run(main: 100, load: 40, other: 10, exit: 105))
        var other = try run(main: 100, load: 40, other: 10, exit: 105)
        other.program = "/usr/bin/gzip"
        gate.add(other)
        XCTAssertEqual(gate.programMismatch, "the baseline ran app but the new runs ran gzip: a baseline must be runs of "
                                             + "the same program")
    }

    /// The Markdown report: the failed and skipped lines of every suite (budget and baseline), their
    /// messages without the suite's name, the passed ones counted, other warnings listed.
    func testMarkdownReportListsFailuresAndSkips() throws {
        var report = MarkdownReport()
        let budget = BudgetCheck(try R.profile(R.new), budget: try Budget.parse("[calls]\n\"0x2000\" = \"50ms\"\nnever = \"1ms\"\n"),
                                 name: "runs/2.trace")
        report.add(trace: "runs/2.trace", budget)
        var gate = RegressionGate(tolerance: 0.10)
        gate.addBaseline(try run(main: 100, load: 40, other: 10, exit: 105))
        gate.add(try run(main: 120, load: 40, other: 10, exit: 125))
        report.add(trace: "new|dir against base", gate.verdict(name: "new|dir against base").check)
        XCTAssertEqual(report.text, """
            **calltrace check: failed** (3 of 6 lines; 2 passed, 1 skipped)

            | result | suite | line | details |
            |---|---|---|---|
            | **failed** | `runs/2.trace` | calls: 0x2000 at most 50 ms | 0x2000 took 62.00 ms, budget 50 ms (1 of 2 calls over) |
            | skipped | `runs/2.trace` | calls: never at most 1 ms | never has no recorded call (it did not run) |
            | **failed** | `new\\|dir against base` | regression: the whole run at most 10% slower | the whole run took 125.00 ms per run, baseline 105.00 ms: +19.0% (by ratio: too few runs for a test), over the 10% allowed |
            | **failed** | `new\\|dir against base` | regression: 0x1000 at most 10% slower | 0x1000 took 120.00 ms per run, baseline 100.00 ms: +20.0% (by ratio: too few runs for a test), over the 10% allowed |

            Warnings:
            - new\\|dir against base: not enough runs for a significance test (need 4 per side at --alpha 0.05, have 1 run against 1): a plain ratio decides, and one run's noise can pass or fail the gate

            """)
        var passing = MarkdownReport()
        passing.add(trace: "a", BudgetCheck(try R.profile(R.base), budget: try Budget.parse("[calls]\n\"0x2000\" = \"1s\"\n"), name: "a"))
        XCTAssertEqual(passing.text, "**calltrace check: passed** (1 line)\n")
    }

    // MARK: - A real program through the CLI

    /// Fixtures/regress.c (setup >= 50 ms, compress >= argv[1] ms) traced 5 times at each setting.
    private struct Runs {
        let fast: URL, slow: URL, again: URL
    }

    private func record(_ fixture: Fixture, milliseconds: Int, runs: Int, into name: String) throws -> URL {
        let directory = Workspace.directory(name)
        for index in 1...runs {
            let (result, trace) = try fixture.run(["\(milliseconds)"], traceName: "\(name)-\(index)")
            XCTAssertEqual(result.status, 0, result.description)
            try FileManager.default.moveItem(at: trace, to: directory.appendingPathComponent("\(index).trace"))
        }
        return directory
    }

    private func recordedRuns() throws -> (Fixture, Runs) {
        let fixture = try Fixture.build(["regress.c"], compiler: .gcc)
        return (fixture, Runs(fast: try record(fixture, milliseconds: 100, runs: 5, into: "fast"),
                              slow: try record(fixture, milliseconds: 150, runs: 5, into: "slow"),
                              again: try record(fixture, milliseconds: 100, runs: 5, into: "again")))
    }

    /// compress +50%, main +33% (costs are lower bounds: compress >= 150 ms against >= 100 ms; every
    /// slow run is slower than every fast one unless a fast run overran its sleeps by 50 ms): exit 1
    /// at 20%, naming them with p = 0.008, in the JUnit and Markdown reports too. Exit 0 at 80%: the
    /// loose upper bound, which fails only if the slow runs overran their sleeps by 30 ms more than
    /// the fast ones, on average. Equal runs, a directory against itself, and a faster NEW pass.
    func testCheckAgainstABaselineOfRealRuns() throws {
        let (fixture, runs) = try recordedRuns()
        let junit = fixture.directory.appendingPathComponent("gate.xml")
        let markdown = fixture.directory.appendingPathComponent("gate.md")
        let failed = try calltrace(["check", runs.slow.path, "--baseline", runs.fast.path, "--max-regression", "20%",
                                    "--junit", junit.path, "--markdown", markdown.path])
        XCTAssertEqual(failed.status, 1, failed.description)
        let name = "\(runs.slow.path) against \(runs.fast.path)"
        let lines = failed.stdout.split(separator: "\n").map(String.init)
        // The whole run first, then main and compress (both +50 ms: in either order); setup sleeps
        // 50 ms in both.
        XCTAssertEqual(lines.count, 3, failed.description)
        XCTAssertTrue(lines.first?.hasPrefix("\(name): the whole run took ") ?? false, failed.description)
        XCTAssertEqual(Set(lines.dropFirst().map { $0.dropFirst(name.count + 2).prefix { $0 != " " } }), ["main", "compress"],
                       failed.description)
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix(name + ": ") && $0.hasSuffix("(p = 0.008), over the 20% allowed") },
                      failed.description)
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(name): compress took 15") }, failed.description)
        XCTAssertEqual(failed.stderr, "", "5 runs a side: no warning")
        let xml = try String(contentsOf: junit, encoding: .utf8)
        XCTAssertTrue(xml.contains("<testsuite name=\"\(name)\" tests=\"4\" failures=\"3\" skipped=\"0\">"), xml)
        XCTAssertNotNil(xml.range(of: #"<testcase classname="calltrace.check" name="regression: setup at most 20% slower" time="0\.0[5-9][0-9]*"/>"#,
                                  options: .regularExpression), "passed, its time >= 50 ms: \(xml)")
        XCTAssertTrue(xml.contains("name=\"regression: compress at most 20% slower\""), xml)
        let comment = try String(contentsOf: markdown, encoding: .utf8)
        XCTAssertTrue(comment.hasPrefix("**calltrace check: failed** (3 of 4 lines; 1 passed, 0 skipped)\n"), comment)
        XCTAssertTrue(comment.contains("| **failed** | `\(name)` | regression: compress at most 20% slower | compress took 15"), comment)

        let loose = try calltrace(["check", runs.slow.path, "--baseline", runs.fast.path, "--max-regression", "80%"])
        XCTAssertEqual(loose.status, 0, loose.description)
        XCTAssertEqual(loose.stdout, "ok: \(name): nothing more than 80% slower (the whole run and 3 functions; 5 runs against 5, "
                                     + "Mann-Whitney U test at p < 0.05)\n")
        for (new, base) in [(runs.fast, runs.fast), (runs.again, runs.fast), (runs.fast, runs.slow)] {
            let passed = try calltrace(["check", new.path, "--baseline", base.path, "--max-regression", "20%"])
            XCTAssertEqual(passed.status, 0, "\(new.lastPathComponent) against \(base.lastPathComponent): \(passed)")
            XCTAssertTrue(passed.stdout.hasPrefix("ok: "), passed.description)
        }

        // One run against one: said on stderr, and the ratio decides.
        let single = try calltrace(["check", runs.slow.appendingPathComponent("1.trace").path,
                                    "--baseline", runs.fast.appendingPathComponent("1.trace").path, "--max-regression", "20%"])
        XCTAssertEqual(single.status, 1, single.description)
        XCTAssertTrue(single.stdout.contains(": compress took 15"), single.description)
        XCTAssertTrue(single.stdout.contains("(by ratio: too few runs for a test), over the 20% allowed"), single.description)
        XCTAssertTrue(single.stderr.hasPrefix("calltrace: warning: ") && single.stderr.contains(
            "not enough runs for a significance test (need 4 per side at --alpha 0.05, have 1 run against 1)"), single.stderr)
        XCTAssertEqual(single.stderr.split(separator: "\n").count, 1, single.stderr)
    }

    /// `[calls]` percentiles over real runs: p50 of compress's worst call per trace is >= 150 ms in
    /// the slow runs (over 140 ms: exit 1), and in the fast runs >= 100 ms (within 140 ms unless the
    /// median run overran its sleep by 40 ms); with a budget and a baseline, both are held.
    func testCallPercentilesAndTheBaselineTogether() throws {
        let (fixture, runs) = try recordedRuns()
        let budget = fixture.directory.appendingPathComponent("p50.toml")
        try "[calls]\ncompress.p50 = \"140ms\"\nsetup.max = \"10s\"\n".write(to: budget, atomically: true, encoding: .utf8)
        let over = try calltrace(["check", "--budget", budget.path, runs.slow.path])
        XCTAssertEqual(over.status, 1, over.description)
        let line = try XCTUnwrap(over.stdout.split(separator: "\n").first.map(String.init), over.description)
        XCTAssertTrue(line.hasPrefix("5 traces: compress p50 of the worst call per trace was 15"), line)
        XCTAssertTrue(line.hasSuffix(" ms over 5 traces with a call, budget 140 ms"), line)
        XCTAssertEqual(over.stdout.split(separator: "\n").count, 1, over.description)

        let within = try calltrace(["check", "--budget", budget.path, runs.fast.path, "--baseline", runs.again.path,
                                    "--max-regression", "20%"])
        XCTAssertEqual(within.status, 0, within.description)
        let ok = within.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(ok.count, 2, within.description)
        XCTAssertEqual(ok.first, "ok: 5 traces within budget (2 limits)")
        XCTAssertTrue(ok.last?.hasPrefix("ok: \(runs.fast.path) against \(runs.again.path): nothing more than 20% slower") ?? false,
                      within.description)
    }

    /// Bad input: one error line and exit 2, nothing on stdout.
    func testBadInputIsOneLineAndExitTwo() throws {
        let runs = Workspace.directory("gate-bad")
        for (index, trace) in [R.base, R.new].enumerated() {
            try Data(trace.bytes).write(to: runs.appendingPathComponent("\(index + 1).trace"))
        }
        let fixture = try Fixture.build(["regress.c"], compiler: .gcc)
        let (result, other) = try fixture.run(["1"])
        XCTAssertEqual(result.status, 0, result.description)
        let cases: [([String], String)] = [
            ([runs.path, "--baseline", "/nonexistent/base", "--max-regression", "20%"],
             "--baseline: cannot open /nonexistent/base: No such file or directory"),
            ([runs.path, "--baseline", runs.path, "--max-regression", "20"],
             "--max-regression '20' is not a percentage: expected the slowdown to allow, such as 20%"),
            ([runs.path, "--baseline", runs.path, "--max-regression", "-5%"],
             "--max-regression '-5%' is not a percentage: expected the slowdown to allow, such as 20%"),
            ([runs.path, "--baseline", runs.path], "--baseline needs --max-regression, the slowdown to allow, such as --max-regression 20%"),
            ([runs.path, "--max-regression", "20%"],
             "--max-regression needs --baseline BASE: the runs (a trace or a directory of *.trace files) to compare with"),
            ([runs.path], "nothing to check: give --budget FILE, or --baseline BASE with --max-regression PERCENT, or both"),
            ([runs.path, "--baseline", runs.path, "--max-regression", "20%", "--alpha", "1.5"],
             "--alpha '1.5' is not valid: expected a significance level between 0 and 1, such as 0.05"),
            ([other.path, "--baseline", runs.path, "--max-regression", "20%"],
             "\(other.path): the baseline ran app but the new runs ran regress: a baseline must be runs of the same program"),
        ]
        for (arguments, message) in cases {
            let result = try calltrace(["check"] + arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result)")
            XCTAssertEqual(result.stdout, "", "\(arguments)")
            XCTAssertEqual(result.stderr, "calltrace: error: \(message)\n", "\(arguments)")
        }
    }
}
