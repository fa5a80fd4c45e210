import CalltraceKit
import Foundation
import XCTest

/// The views on real programs, through the real command line: marks in the timeline, frames in
/// hitches, a hang's native stack in `hangs` and under its call in `report`. Sleep-based fixtures:
/// lower bounds exact, upper bounds loose.
final class ViewFixtureTests: XCTestCase {
    private func json(_ result: CommandResult) throws -> [String: Any] {
        XCTAssertEqual(result.status, 0, result.description)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                             result.description)
    }

    /// marks.c: a constructor's mark before main, "ready" after main's 20 ms nap, "config" with its
    /// extra text, two marks from a second thread.
    func testTimelineShowsMarksFromBeforeMainAndThePhases() throws {
        let fixture = try Fixture.build(["marks.c"], compiler: .gcc)
        let (run, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "1ms"])
        XCTAssertEqual(run.status, 0, run.description)
        let document = try json(try calltrace(["timeline", url.path, "--ready", "ready", "--format", "json"]))
        let points = try XCTUnwrap(document["points"] as? [[String: Any]])
        let kinds = points.map { $0["kind"] as? String ?? "?" }
        let names = points.map { $0["name"] as? String ?? "?" }
        let context = "\(points)"
        XCTAssertEqual(document["from"] as? String, "process_start", context)
        XCTAssertEqual(kinds.first, "process_start", context)
        XCTAssertEqual(kinds.last, "end", context)
        let constructor = try XCTUnwrap(names.firstIndex(of: "constructor"), context)
        let main = try XCTUnwrap(kinds.firstIndex(of: "main"), context)
        let ready = try XCTUnwrap(names.firstIndex(of: "ready"), context)
        XCTAssertLessThan(constructor, main, "the constructor's mark comes before main: \(context)")
        XCTAssertLessThan(main, ready, context)
        XCTAssertEqual(points.first { $0["name"] as? String == "config" }?["extra"] as? String, "path=/etc/x", context)
        XCTAssertTrue(names.contains("worker start") && names.contains("worker done"), context)
        let phases = try XCTUnwrap(document["phases"] as? [[String: Any]])
        XCTAssertEqual(phases.map { $0["name"] as? String }, ["T1", "T2", "T3"], "\(phases)")
        let t2 = try XCTUnwrap(phases.first { $0["name"] as? String == "T2" }?["duration_ms"] as? Double)
        XCTAssertGreaterThanOrEqual(t2, 20, "main naps 20 ms before it is ready")
        XCTAssertLessThan(t2, 5000)
        let text = try calltrace(["timeline", url.path, "--ready", "ready"])
        XCTAssertTrue(text.stdout.contains("mark \"config\" path=/etc/x"), text.stdout)
        XCTAssertTrue(text.stdout.contains("T2 main -> \"ready\""), text.stdout)
    }

    /// marks.c: 20 frames 5 ms apart but for two of 50 ms. At a 20 ms target, each 50 ms frame is
    /// 2.5 or more intervals: at least 2 dropped frames each, and the worst names the frame's call.
    func testHitchesCountTheLongFramesAndNameTheirCalls() throws {
        let fixture = try Fixture.build(["marks.c"], compiler: .clang)
        let (run, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "1ms"])
        XCTAssertEqual(run.status, 0, run.description)
        let document = try json(try calltrace(["hitches", url.path, "--frame", "20ms", "--format", "json"]))
        XCTAssertEqual(document["frames"] as? Int, 20, "\(document)")
        XCTAssertEqual(document["frame_interval_ms"] as? Double, 20)
        XCTAssertGreaterThanOrEqual(document["drop_events"] as? Int ?? 0, 2, "\(document)")
        XCTAssertGreaterThanOrEqual(document["dropped_frames"] as? Int ?? 0, 4, "\(document)")
        XCTAssertGreaterThanOrEqual(document["worst_drop"] as? Int ?? 0, 2, "\(document)")
        let worst = try XCTUnwrap((document["hitches"] as? [[String: Any]])?.first, "\(document)")
        let causes = (worst["calls"] as? [[String: Any]] ?? []).compactMap { $0["function"] as? String }
        XCTAssertTrue(causes.contains("do_frame") || causes.contains("sleep_ms"), "\(worst)")
        // Each cause's path starts where the frame loop runs: main, then do_frame.
        let paths = (worst["calls"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? [String] }
        XCTAssertFalse(paths.isEmpty, "\(worst)")
        for path in paths { XCTAssertEqual(Array(path.prefix(2)), ["main", "do_frame"], "\(worst)") }
        let text = try calltrace(["hitches", url.path, "--frame", "20ms", "--worst", "1"])
        XCTAssertTrue(text.stdout.contains("  main > do_frame"), text.stdout)
        XCTAssertTrue(text.stdout.hasPrefix("frames: 20 in "), text.stdout)
        XCTAssertEqual(text.stdout.components(separatedBy: "\n  at ").count, 2, "one hitch listed: \(text.stdout)")
    }

    /// hang.c poll: one hang, its stack names libc's poll and the instrumented caller, in `hangs`
    /// and under the call in `report`.
    func testHangStackShowsInHangsAndUnderItsCallInTheReport() throws {
        let fixture = try Fixture.build(["hang.c"], compiler: .gcc, flags: ["-O2", "-g", "-pthread"])
        let (run, url) = try fixture.run(["poll"], environment: ["CALLTRACE_HANG": "200ms", "CALLTRACE_THRESHOLD": "1ms"],
                                         traceName: "view-hang")
        XCTAssertEqual(run.status, 3, "the fixture's own status: \(run)")
        let document = try json(try calltrace(["hangs", url.path, "--format", "json"]))
        let hangs = try XCTUnwrap(document["hangs"] as? [[String: Any]])
        XCTAssertEqual(hangs.count, 1, "\(document)")
        XCTAssertEqual(hangs.first?["function"] as? String, "wait_in_poll", "\(document)")
        XCTAssertGreaterThanOrEqual(hangs.first?["quiet_ms"] as? Double ?? 0, 200, "\(document)")
        let stack = (hangs.first?["stack"] as? [[String: Any]] ?? []).compactMap { $0["function"] as? String }
        XCTAssertTrue(stack.first?.contains("poll") ?? false, "innermost is libc's poll: \(stack)")
        XCTAssertTrue(stack.contains("wait_in_poll") && stack.contains("main"), "\(stack)")
        let report = try calltrace(["report", url.path])
        let lines = report.stdout.split(separator: "\n").map(String.init)
        let call = try XCTUnwrap(lines.firstIndex { treeLineName($0) == "wait_in_poll" && $0.contains("|  wait_in_poll") },
                                 report.stdout)
        XCTAssertTrue(lines.count > call + 2 && lines[call + 1].contains("! hang at ") && lines[call + 2].contains("poll"),
                      report.stdout)
        let tree = try json(try calltrace(["report", url.path, "--format", "json"]))
        let main = ((tree["threads"] as? [[String: Any]])?.first?["calls"] as? [[String: Any]])?.first
        let hung = (main?["children"] as? [[String: Any]])?.first { $0["function"] as? String == "wait_in_poll" }
        XCTAssertEqual((hung?["hangs"] as? [Any])?.count, 1, "\(tree)")
    }

    /// A trace recorded without CALLTRACE_HANG: `hangs` says how to record them; a program that
    /// never called calltrace_frame(): `hitches` says so. Both exit 0.
    func testViewsSayWhenTheTraceHasNothingForThem() throws {
        let fixture = try Fixture.build(["hang.c"], compiler: .gcc, flags: ["-O2", "-g", "-pthread"])
        let (run, url) = try fixture.run(["quick"], traceName: "view-quick")
        XCTAssertEqual(run.status, 0, run.description)
        let hangs = try calltrace(["hangs", url.path])
        XCTAssertEqual(hangs.status, 0, hangs.description)
        XCTAssertTrue(hangs.stdout.hasPrefix("hangs were not watched"), hangs.stdout)
        let hitches = try calltrace(["hitches", url.path])
        XCTAssertEqual(hitches.status, 0, hitches.description)
        XCTAssertTrue(hitches.stdout.hasPrefix("no frames"), hitches.stdout)
        let bad = try calltrace(["hitches", url.path, "--format", "svg"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("unknown --format 'svg' (choose text, json)"), bad.stderr)
    }

    /// Colour only when asked for by the terminal rules: piped, plain; CLICOLOR_FORCE colours a
    /// pipe (tree and the warning word); NO_COLOR wins over it.
    func testReportColoursOnlyWhenAllowed() throws {
        try Workspace.requireProducts()
        let fixture = try Fixture.build(["hang.c"], compiler: .gcc, flags: ["-O2", "-g", "-pthread"])
        let (run, url) = try fixture.run(["quick"], environment: ["CALLTRACE_THRESHOLD": "0"], traceName: "view-colour")
        XCTAssertEqual(run.status, 0, run.description)
        let escape = "\u{1B}["
        let plain = try calltrace(["report", url.path])
        XCTAssertTrue(plain.stdout.contains("|main"), plain.description)
        XCTAssertFalse(plain.stdout.contains(escape) || plain.stderr.contains(escape), plain.description)
        // swift test runs tests with NO_COLOR=1; an empty NO_COLOR counts as unset.
        let force = ["CLICOLOR_FORCE": "1", "NO_COLOR": ""]
        let forced = try calltrace(["report", url.path], environment: force)
        XCTAssertTrue(forced.stdout.contains(escape + "2m 0|" + escape + "0m"), forced.description)
        let missing = try calltrace(["report", url.path + ".missing"], environment: force)
        XCTAssertTrue(missing.stderr.contains("calltrace: " + escape + "1;31merror:" + escape + "0m "), missing.description)
        let refused = try calltrace(["report", url.path],
                                      environment: ["CLICOLOR_FORCE": "1", "NO_COLOR": "1"])
        XCTAssertEqual(refused.stdout, plain.stdout)
    }
}
