@testable import CalltraceKit
import Foundation
import XCTest

/// Budget files (TOML) and holding profiles to them: calls, marks, frames; each bad file is one
/// error naming the problem.
final class BudgetTests: XCTestCase {
    typealias R = SyntheticRuns

    private let full = """
        [calls]          # the longest any one call of the function may take
        load_assets = "50ms"
        [marks]          # the latest each mark may come, from process start
        "first frame" = "400ms"
        [frames]
        max_dropped_at_once = 2
        max_drop_events = 3
        """

    func testTheIssuesExampleParses() throws {
        let budget = try Budget.parse(full)
        XCTAssertEqual(budget.calls, [Budget.Limit(name: "load_assets", limit: Nanoseconds(50_000_000))])
        XCTAssertEqual(budget.marks, [Budget.Limit(name: "first frame", limit: Nanoseconds(400_000_000))])
        XCTAssertEqual(budget.maxDroppedAtOnce, 2)
        XCTAssertEqual(budget.maxDropEvents, 3)
        XCTAssertEqual(budget.limitCount, 4)
        XCTAssertEqual(try Budget.parse("").limitCount, 0, "every table is optional")
    }

    func testDurationsReadAsTheThresholdIs() throws {
        let budget = try Budget.parse("[calls]\na = \"1.5s\"\nb = \"250us\"\nc = \"7\"\nd = \"0\"\n")
        XCTAssertEqual(budget.calls.map(\.limit.value), [1_500_000_000, 250_000, 7_000_000, 0])
    }

    func testBadFilesNameTheProblem() {
        let cases: [(String, String)] = [
            ("[call]\na = \"1ms\"", "unknown table [call] (expected [calls], [marks], [frames] or [spans])"),
            ("limit = 3", "unknown key 'limit' outside a table (expected [calls], [marks], [frames] or [spans])"),
            ("calls = 3", "'calls' must be a table ([calls]), not an integer"),
            ("[calls]\nload_assets = 50", "[calls] load_assets: expected a duration string such as \"50ms\", not an integer"),
            ("[calls]\nload_assets = \"50 ms\"",
             "[calls] load_assets: '50 ms' is not a duration such as 10ms, 250us, 1.5s or 0"),
            ("[marks]\n\"first frame\" = \"-4ms\"",
             "[marks] \"first frame\": '-4ms' is not a duration such as 10ms, 250us, 1.5s or 0"),
            ("[frames]\nmax_drops = 2", "[frames]: unknown key 'max_drops' (expected max_dropped_at_once or max_drop_events)"),
            ("[frames]\nmax_drop_events = \"3\"", "[frames] max_drop_events: expected a whole number, not a string"),
            ("[frames]\nmax_drop_events = -1", "[frames] max_drop_events: -1 is negative"),
            ("spans = \"1ms\"", "'spans' must be a table ([spans]), not a string"),
            ("[spans]\n\"open document\" = 300",
             "[spans] \"open document\": expected a duration string such as \"300ms\" or dotted keys such as "
                + "\"open document\".p90 = \"200ms\", not an integer"),
            ("[spans]\nsave = \"3 s\"", "[spans] save: '3 s' is not a duration such as 10ms, 250us, 1.5s or 0"),
            ("[spans]\nsave.p900 = \"3s\"", "[spans] save: unknown key 'p900' (expected max, or a percentile p1 to p100 such as p90)"),
            ("[spans]\nsave.p090 = \"3s\"", "[spans] save: unknown key 'p090' (expected max, or a percentile p1 to p100 such as p90)"),
            ("[spans]\nsave.mean = \"3s\"", "[spans] save: unknown key 'mean' (expected max, or a percentile p1 to p100 such as p90)"),
            ("[spans]\nsave.p90 = 200", "[spans] save.p90: expected a duration string such as \"200ms\", not an integer"),
            ("[spans]\n\"open document\".max = \"-1ms\"",
             "[spans] \"open document\".max: '-1ms' is not a duration such as 10ms, 250us, 1.5s or 0"),
            ("[calls]\nparse.p900 = \"1ms\"", "[calls] parse: unknown key 'p900' (expected max, or a percentile p1 to p100 such as p90)"),
            ("[calls]\nparse.p90 = 15", "[calls] parse.p90: expected a duration string such as \"50ms\", not an integer"),
            ("[calls]\n\"load(int)\".p90 = \"5 ms\"",
             "[calls] \"load(int)\".p90: '5 ms' is not a duration such as 10ms, 250us, 1.5s or 0"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try Budget.parse(text), text) { error in
                XCTAssertEqual((error as? BudgetError)?.description, message, text)
            }
        }
        XCTAssertThrowsError(try Budget.parse("[calls\n")) { error in
            let message = (error as? BudgetError)?.description ?? ""
            XCTAssertTrue(message.hasPrefix("line 1, column "), message)
            XCTAssertFalse(message.contains("\n"), message)
        }
    }

    func testCallsOverBudgetAreViolationsAndAbsentOnesWarnings() throws {
        let profile = try R.profile(R.new)
        let budget = try Budget.parse("[calls]\n\"0x2000\" = \"50ms\"\n\"0x1000\" = \"200ms\"\nnever = \"1ms\"\n")
        let check = BudgetCheck(profile, budget: budget, name: "new.trace")
        XCTAssertEqual(check.violations, ["new.trace: 0x2000 took 62.00 ms, budget 50 ms (1 of 2 calls over)"])
        XCTAssertEqual(check.warnings, ["new.trace: never has no recorded call (it did not run)"])
        XCTAssertTrue(BudgetCheck(profile, budget: try Budget.parse("[calls]\n\"0x2000\" = \"62ms\"\n"), name: "n").passed,
                      "a call of exactly the budget is within it")
    }

    func testBudgetUnderTheRecordingThresholdIsAWarning() throws {
        let profile = try R.profile(R.trace([R.call(0x2000, 0, 30, depth: 0)], thresholdNs: 10_000_000))
        let check = BudgetCheck(profile, budget: try Budget.parse("[calls]\n\"0x2000\" = \"5ms\"\n"), name: "t")
        XCTAssertEqual(check.violations, ["t: 0x2000 took 30.00 ms, budget 5 ms"])
        XCTAssertEqual(check.warnings, ["t: the budget of 0x2000 (5 ms) is under the recording threshold (10 ms): "
                                        + "calls between the two were not recorded"])
        let absent = BudgetCheck(profile, budget: try Budget.parse("[calls]\nload = \"50ms\"\n"), name: "t")
        XCTAssertEqual(absent.warnings, ["t: load has no recorded call (it did not run, or ran under the recording "
                                         + "threshold of 10 ms)"])
    }

    func testMarksMustComeInTime() throws {
        var profile = try R.profile(R.base)
        profile.processStartKnown = true
        profile.marks = [ProfileMark(name: "first frame", at: Instant(nanoseconds: 512_300_000), tid: 4242),
                         ProfileMark(name: "first frame", at: Instant(nanoseconds: 900_000_000), tid: 4242),
                         ProfileMark(name: "ready", extra: "cold", at: Instant(nanoseconds: 100_000_000), tid: 4242)]
        let budget = try Budget.parse("[marks]\n\"first frame\" = \"400ms\"\nready = \"0.1s\"\nloaded = \"1s\"\n")
        let check = BudgetCheck(profile, budget: budget, name: "a.trace")
        XCTAssertEqual(check.violations, ["a.trace: mark \"first frame\" came at 512.30 ms, budget 400 ms",
                                          "a.trace: mark \"loaded\" never came, budget 1000 ms"])
        XCTAssertEqual(check.warnings, [])
    }

    /// At 10 ms frames: intervals of 10, 24 (2 intervals: 1 drop), 14 (none: jitter), 41 (4: 3 drops).
    func testFrameDropsAtOnceAndEvents() throws {
        var profile = try R.profile(R.base)
        profile.frameInterval = Nanoseconds(10_000_000)
        profile.frames = [0, 10, 34, 48, 89].map { Instant(nanoseconds: Int64($0) * 1_000_000) }
        let hitches = Hitches(profile: profile, interval: nil, limit: 0)
        XCTAssertEqual(hitches.worst.map(\.dropped), [3, 1])
        XCTAssertEqual(hitches.dropped, 4)
        let strict = BudgetCheck(profile, budget: try Budget.parse("[frames]\nmax_dropped_at_once = 2\nmax_drop_events = 1\n"),
                                 name: "f")
        XCTAssertEqual(strict.violations, ["f: 3 frames dropped at once at 48.00 ms (an interval of 41.00 ms), budget 2",
                                           "f: 2 drop events, budget 1"])
        XCTAssertTrue(BudgetCheck(profile, budget: try Budget.parse("[frames]\nmax_dropped_at_once = 3\nmax_drop_events = 2\n"),
                                  name: "f").passed)
        profile.frames = []
        let none = BudgetCheck(profile, budget: try Budget.parse("[frames]\nmax_drop_events = 0\n"), name: "f")
        XCTAssertTrue(none.passed)
        XCTAssertEqual(none.warnings, ["f: fewer than two frames recorded: [frames] not checked"])
    }

    func testABudgetByNameCoversCppParametersAndEveryModule() throws {
        let profile = R.namedProfile([
            (ProfileFunction(name: "load_assets(int)", module: "app"), 62_100_000),
            (ProfileFunction(name: "load_assets", module: "libassets.so"), 70_000_000),
            (ProfileFunction(name: "load_assets_fast", module: "app"), 90_000_000),
        ])
        let check = BudgetCheck(profile, budget: try Budget.parse("[calls]\nload_assets = \"50ms\"\n"), name: "a.trace")
        XCTAssertEqual(check.violations, ["a.trace: load_assets took 70.00 ms, budget 50 ms (2 of 2 calls over)"])
    }

    // MARK: - [calls] percentiles

    /// `[calls]` takes dotted keys as `[spans]` does: `max` (the same as the plain string) beside
    /// percentiles; a name with only percentiles sets no maximum.
    func testCallPercentilesParseBesideTheMaximum() throws {
        let budget = try Budget.parse("""
            [calls]
            load = "50ms"
            parse.max = "20ms"
            parse.p90 = "15ms"
            parse.p50 = "10ms"
            only.p99 = "1s"
            """)
        XCTAssertEqual(budget.calls, [Budget.Limit(name: "load", limit: Nanoseconds(50_000_000)),
                                      Budget.Limit(name: "parse", limit: Nanoseconds(20_000_000))])
        XCTAssertEqual(budget.callPercentiles, [
            Budget.NameLimits(name: "only", percentiles: [.init(rank: 99, limit: Nanoseconds(1_000_000_000))]),
            Budget.NameLimits(name: "parse", max: Nanoseconds(20_000_000),
                              percentiles: [.init(rank: 50, limit: Nanoseconds(10_000_000)),
                                            .init(rank: 90, limit: Nanoseconds(15_000_000))]),
        ])
        XCTAssertEqual(budget.limitCount, 5)
    }

    /// Percentiles of the worst call of the function in each trace, over every trace given: 0x2000's
    /// worst calls are 40 (base), 62 (new) and 45 ms; the trace without it is left out (p50 is the
    /// 2nd of 3, p90 the 3rd); a name no trace recorded is a warning.
    func testCallPercentilesHoldTheWorstCallPerTraceOverEveryTrace() throws {
        let budget = try Budget.parse("[calls]\n\"0x2000\".p50 = \"45ms\"\n\"0x2000\".p90 = \"60ms\"\nnever.p50 = \"1ms\"\n")
        var check = PercentileCheck(budget)
        XCTAssertFalse(check.isEmpty)
        for trace in [R.base, R.new, R.trace([R.call(0x2000, 0, 45, depth: 0)]), R.trace([R.call(0x1000, 0, 5, depth: 0)])] {
            let profile = try R.profile(trace)
            XCTAssertTrue(BudgetCheck(profile, budget: budget, name: "t").outcomes.isEmpty, "percentiles are not held per trace")
            check.add(profile)
        }
        let result = check.check()
        XCTAssertEqual(result.violations, ["4 traces: 0x2000 p90 of the worst call per trace was 62.00 ms over 3 traces with a call, "
                                           + "budget 60 ms"])
        XCTAssertEqual(result.warnings, ["4 traces: never has no recorded call: p50 not checked"])
        XCTAssertEqual(result.outcomes.map(\.name), ["calls: 0x2000 p50 at most 45 ms", "calls: 0x2000 p90 at most 60 ms",
                                                     "calls: never p50 at most 1 ms"])
        XCTAssertEqual(result.outcomes.map(\.measured), [Nanoseconds(45_000_000), Nanoseconds(62_000_000), nil],
                       "a p50 of exactly its budget is within it")
        XCTAssertTrue(PercentileCheck(try Budget.parse("[calls]\nload = \"1ms\"\n")).isEmpty)
    }

    // MARK: - [spans]

    func testSpanLimitsParseAsAStringOrDottedKeys() throws {
        let budget = try Budget.parse("""
            [spans]
            "open document" = "300ms"
            save.max = "1s"
            save.p90 = "200ms"
            save.p50 = "50ms"
            """)
        XCTAssertEqual(budget.spans, [
            Budget.SpanLimit(name: "open document", max: Nanoseconds(300_000_000)),
            Budget.SpanLimit(name: "save", max: Nanoseconds(1_000_000_000),
                             percentiles: [.init(rank: 50, limit: Nanoseconds(50_000_000)),
                                           .init(rank: 90, limit: Nanoseconds(200_000_000))]),
        ])
        XCTAssertEqual(budget.limitCount, 4)
        // TOML has no key that is both a value and a table: the two forms do not mix for one name.
        XCTAssertThrowsError(try Budget.parse("[spans]\nsave = \"1s\"\nsave.p90 = \"1ms\"\n")) { error in
            let message = (error as? BudgetError)?.description ?? ""
            XCTAssertTrue(message.hasPrefix("line "), message)
            XCTAssertFalse(message.contains("\n"), message)
        }
    }

    private func span(_ name: String, _ beginMs: Int64, _ endMs: Int64?) -> ProfileSpan {
        ProfileSpan(name: name, begin: Instant(nanoseconds: beginMs * 1_000_000),
                    end: endMs.map { Instant(nanoseconds: $0 * 1_000_000) }, beginTid: 1, endTid: endMs == nil ? nil : 1)
    }

    /// The longest span per trace, unfinished ones with the time they were open when that is over
    /// the limit; one that never began is a warning.
    func testSpanMaxPerTraceCountsUnfinishedOnesOverTheLimit() throws {
        var profile = try R.profile(R.base)
        profile.ended = Instant(nanoseconds: 1_000_000_000)
        profile.spans = [span("open", 0, 120), span("open", 200, 520), span("open", 600, 650),
                         span("save", 100, 150), span("save", 900, nil), span("load", 100, 200), span("load", 800, nil)]
        let budget = try Budget.parse("[spans]\nopen = \"300ms\"\nsave = \"60ms\"\nload = \"300ms\"\nquit = \"1ms\"\n")
        let check = BudgetCheck(profile, budget: budget, name: "a.trace")
        XCTAssertEqual(check.violations, ["a.trace: span \"open\" took 320.00 ms, budget 300 ms (1 of 3 spans over)",
                                          "a.trace: span \"save\" was still open after 100.00 ms when the trace ended, budget 60 ms"])
        XCTAssertEqual(check.warnings, ["a.trace: span \"quit\" never began"])
        XCTAssertEqual(check.outcomes.map(\.name), ["spans: \"load\" at most 300 ms", "spans: \"open\" at most 300 ms",
                                                    "spans: \"quit\" at most 1 ms", "spans: \"save\" at most 60 ms"],
                       "by name, as the budget is read")
        XCTAssertEqual(check.outcomes[0], .init(name: "spans: \"load\" at most 300 ms", measured: Nanoseconds(100_000_000),
                                                result: .passed), "load open 200 ms at the end, under its limit")
        XCTAssertTrue(BudgetCheck(profile, budget: try Budget.parse("[spans]\nopen = \"320ms\"\n"), name: "a").passed,
                      "a span of exactly the budget is within it")
        XCTAssertTrue(BudgetCheck(profile, budget: try Budget.parse("[spans]\nopen.p50 = \"1ms\"\n"), name: "a").passed,
                      "percentiles are not held per trace")
    }

    /// Percentiles pool the finished spans of every trace, nearest rank as `spans` shows them.
    func testSpanPercentilesOverEveryTraceTogether() throws {
        let budget = try Budget.parse("[spans]\nopen.p90 = \"300ms\"\nopen.p50 = \"100ms\"\nsave.p90 = \"1s\"\n")
        var check = PercentileCheck(budget)
        XCTAssertFalse(check.isEmpty)
        var stats = SpanStatistics(limit: 0)
        for durations in [[50, 80, 400], [90, 120, 60, 70], [110, 75, 65]] as [[Int64]] {
            var profile = try R.profile(R.base)
            profile.spans = durations.map { span("open", 0, $0) } + [span("open", 0, nil), span("save", 0, nil)]
            check.add(profile)
            stats.add(profile)
        }
        stats.finish()
        let result = check.check()
        let p90 = stats.rows.first { $0.name == "open" }?.percentile(90)
        XCTAssertEqual(p90, Nanoseconds(120_000_000), "the 9th of 10 durations: unfinished ones left out")
        XCTAssertEqual(result.violations, [])
        XCTAssertEqual(result.outcomes.map(\.name), ["spans: \"open\" p50 at most 100 ms", "spans: \"open\" p90 at most 300 ms",
                                                     "spans: \"save\" p90 at most 1000 ms"])
        XCTAssertEqual(result.outcomes.map(\.measured), [Nanoseconds(75_000_000), p90, nil])
        XCTAssertEqual(result.warnings, ["3 traces: span \"save\" never finished: p90 not checked"])

        var strict = PercentileCheck(try Budget.parse("[spans]\nopen.p90 = \"100ms\"\n"))
        var profile = try R.profile(R.base)
        profile.spans = [50, 80, 400, 90, 120].map { span("open", 0, $0) }
        strict.add(profile)
        XCTAssertEqual(strict.check().violations, ["1 trace: span \"open\" p90 was 400.00 ms over 5 spans, budget 100 ms"])
        XCTAssertTrue(PercentileCheck(try Budget.parse("[spans]\nopen = \"1ms\"\n")).isEmpty)
    }

    /// spans.c under the runtime, held by `calltrace check`: max per trace, p90 over the traces, the
    /// span never ended held by the time it was open, one JUnit case per line.
    func testCheckHoldsRealSpansToTheBudget() throws {
        let fixture = try Fixture.build(["spans.c"], compiler: .gcc)
        let (result, url) = try fixture.run()
        XCTAssertEqual(result.status, 0, result.description)
        let budgetURL = fixture.directory.appendingPathComponent("spans.toml")
        try """
            [spans]
            startup = "5ms"
            inner = "30s"
            never = "1us"
            outer.max = "30s"
            outer.p90 = "10ms"
            overlap.p50 = "30s"
            """.write(to: budgetURL, atomically: true, encoding: .utf8)
        let junit = fixture.directory.appendingPathComponent("spans.xml")
        let check = try calltrace(["check", "--budget", budgetURL.path, "--junit", junit.path, url.path, url.path])
        XCTAssertEqual(check.status, 1, check.description)
        let lines = check.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 5, check.description)
        XCTAssertEqual(lines.filter { $0.contains("span \"startup\" took ") && $0.hasSuffix("budget 5 ms") }.count, 2, check.description)
        XCTAssertEqual(lines.filter { $0.contains("span \"never\" was still open after ") }.count, 2, check.description)
        XCTAssertTrue(lines.last?.hasPrefix("2 traces: span \"outer\" p90 was ") ?? false, check.description)
        XCTAssertTrue(lines.last?.hasSuffix(" ms over 2 spans, budget 10 ms") ?? false, check.description)
        let xml = try String(contentsOf: junit, encoding: .utf8)
        XCTAssertTrue(xml.contains("<testsuites name=\"calltrace check\" tests=\"10\" failures=\"5\" skipped=\"0\">"), xml)
        XCTAssertTrue(xml.contains("<testsuite name=\"2 traces\" tests=\"2\" failures=\"1\" skipped=\"0\">"), xml)
        XCTAssertTrue(xml.contains("name=\"spans: &quot;outer&quot; p90 at most 10 ms\""), xml)

        try "[spans]\nstartup = \"30s\"\nouter.p90 = \"30s\"\n".write(to: budgetURL, atomically: true, encoding: .utf8)
        let ok = try calltrace(["check", "--budget", budgetURL.path, url.path])
        XCTAssertEqual(ok.status, 0, ok.description)
        XCTAssertEqual(ok.stdout, "ok: 1 trace within budget (2 limits)\n")
        try "[spans]\nstartup.p900 = \"30s\"\n".write(to: budgetURL, atomically: true, encoding: .utf8)
        let bad = try calltrace(["check", "--budget", budgetURL.path, url.path])
        XCTAssertEqual(bad.status, 2, bad.description)
        XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, bad.description)
    }
}
