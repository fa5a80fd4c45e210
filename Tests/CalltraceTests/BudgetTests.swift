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
            ("[call]\na = \"1ms\"", "unknown table [call] (expected [calls], [marks] or [frames])"),
            ("limit = 3", "unknown key 'limit' outside a table (expected [calls], [marks] or [frames])"),
            ("calls = 3", "'calls' must be a table ([calls]), not an integer"),
            ("[calls]\nload_assets = 50", "[calls] load_assets: expected a duration string such as \"50ms\", not an integer"),
            ("[calls]\nload_assets = \"50 ms\"",
             "[calls] load_assets: '50 ms' is not a duration such as 10ms, 250us, 1.5s or 0"),
            ("[marks]\n\"first frame\" = \"-4ms\"",
             "[marks] \"first frame\": '-4ms' is not a duration such as 10ms, 250us, 1.5s or 0"),
            ("[frames]\nmax_drops = 2", "[frames]: unknown key 'max_drops' (expected max_dropped_at_once or max_drop_events)"),
            ("[frames]\nmax_drop_events = \"3\"", "[frames] max_drop_events: expected a whole number, not a string"),
            ("[frames]\nmax_drop_events = -1", "[frames] max_drop_events: -1 is negative"),
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
}
