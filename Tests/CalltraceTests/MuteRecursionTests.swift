import CalltraceKit
import Foundation
import XCTest

/// Muting never hides a slow call (docs/design.md, "Adaptive muting"): a recursive function's slow
/// calls are its outer ones, still open while millions of fast inner calls run, so a function
/// with a call of it open beneath the one ending is never muted, nor one whose call came near the
/// threshold through work beneath it. The tree with muting on holds the calls the tree with
/// muting off holds, with no depth gap, and a root call costs about what it costs untraced.
/// Fixture: Fixtures/recursion.c, gcc and clang at -O1 and -O2, its main uninstrumented and timing
/// each root call itself, built once more with no hooks at all for the untraced times.
final class MuteRecursionTests: XCTestCase {
    private struct Build {
        let compiler: Compiler
        let level: String
        let traced: Fixture
        let plain: Fixture
        var label: String { "\(compiler) \(level)" }
    }

    private static let builds = Locked<[String: Build]>([:])

    private func builds(file: StaticString = #filePath, line: UInt = #line) throws -> [Build] {
        var all: [Build] = []
        for compiler in Compiler.allCases {
            for level in ["-O1", "-O2"] {
                let key = "\(compiler)\(level)"
                if let known = Self.builds.withLock({ $0[key] }) {
                    all.append(known)
                    continue
                }
                // The checks are of the source's recursion (every slow recursive call), which tail
                // recursion elimination folds into a loop (fib's second call, walk's right child)
                // when the instrumentation comes after optimisation (sleds); -finstrument-functions'
                // exit hooks keep it from happening. Both builds alike, so the times compare.
                let keep = compiler.hooks ? [] : ["-fno-optimize-sibling-calls"]
                let traced = try Fixture.build(["recursion.c"], compiler: compiler, flags: [level, "-g"] + keep,
                                               name: "recursion\(level)", file: file, line: line)
                let plain = try Fixture.build(["recursion.c"], compiler: compiler, flags: [level, "-g", "-DUNTRACED"] + keep,
                                              name: "recursion-plain\(level)", file: file, line: line)
                let build = Build(compiler: compiler, level: level, traced: traced, plain: plain)
                Self.builds.withLock { $0[key] = build }
                all.append(build)
            }
        }
        return all
    }

    /// The untraced build's root times, the least of three runs (the machine only ever adds time).
    private func untracedTimes(_ build: Build, _ arguments: [String]) throws -> [String: Double] {
        var best: [String: Double] = [:]
        for _ in 0..<3 {
            let run = try build.plain.runUntraced(arguments)
            XCTAssertEqual(run.status, 0, "\(build.label): \(run)")
            for (name, ms) in fixtureTimes(run.stdout) { best[name] = min(best[name] ?? .infinity, ms) }
        }
        return best
    }

    private struct Run {
        let trace: RecordedTrace
        let shape: TraceShape
        let stdout: String
    }

    private func traced(_ build: Build, _ arguments: [String], mute: String, threshold: String,
                        threads: String = "main", file: StaticString = #filePath, line: UInt = #line) throws -> Run {
        let (result, url) = try build.traced.run(arguments, environment: [
            "CALLTRACE_THRESHOLD": threshold, "CALLTRACE_MUTE": mute, "CALLTRACE_THREADS": threads,
        ], traceName: "\(arguments[0])-\(mute)")
        XCTAssertEqual(result.status, 0, "\(build.label) mute \(mute): \(result)", file: file, line: line)
        // Every call the runtime recorded (the reader leaves out those whose final cost falls under the
        // threshold): a depth gap there is a frame the runtime lost.
        return Run(trace: try RecordedTrace(url), shape: try TraceShape(url, measured: true), stdout: result.stdout)
    }

    /// Muting on against muting off, where the work is computation: both runs record the same
    /// root calls, with no depth gap, and the program printed the same. (Deeper calls are compared
    /// exactly by the nap tests above: here their costs are mostly taken-out hook overhead, which
    /// moves by a factor of several between two runs, so which of them pass the threshold does too.)
    private func assertSameSlowCalls(_ on: Run, _ off: Run, thresholdMs: Double, context: String,
                                     file: StaticString = #filePath, line: UInt = #line) {
        let text = "\(context)\n-- muting on:\n\(on.trace.tree)\n-- muting off:\n\(off.trace.tree)"
        XCTAssertEqual(on.stdout.split(separator: "\n").map { $0.split(separator: " ").last },
                       off.stdout.split(separator: "\n").map { $0.split(separator: " ").last },
                       "the results differ; \(text)", file: file, line: line)
        func roots(_ run: Run) -> [String] { run.trace.calls.filter { $0.parent == nil }.map(\.name) }
        XCTAssertEqual(roots(on), roots(off), text, file: file, line: line)
        for run in [on, off] {
            XCTAssertEqual(run.shape.nestingErrors.count, 0, "depth gaps:\n\(run.shape.explain(run.shape.nestingErrors))\n\(text)",
                           file: file, line: line)
            XCTAssertFalse(run.trace.calls.contains { $0.unwound || $0.unfinished }, text, file: file, line: line)
        }
    }

    /// A root call's cost against the same code's untraced time: the cost with the uncertainty
    /// `report` states for it (`± X`) never below half of it (a calibration in a busy moment can put
    /// the constant above what the hooks cost in the recursion, and then the cost is small and X
    /// large: docs/design.md, "Overhead compensation"), never above its measured time, and below a
    /// bound loose enough for a machine running two test suites at once (a traced walk then
    /// measures 30 times its untraced time, preempted time and all: the bound only catches a cost
    /// off by a unit).
    private func assertRootCost(_ run: Run, _ name: String, untracedMs: Double, context: String,
                                file: StaticString = #filePath, line: UInt = #line) {
        let roots = run.trace.calls.filter { $0.name == name && $0.parent == nil }
        guard !roots.isEmpty else {
            XCTFail("root \(name) missing; \(context)\n\(run.trace.tree)", file: file, line: line)
            return
        }
        for root in roots {
            let ms = root.reportedCost.milliseconds
            XCTAssertGreaterThanOrEqual(ms + root.uncertainty.milliseconds, 0.5 * untracedMs,
                                        "\(name) untraced \(untracedMs) ms, reported \(ms) ± \(root.uncertainty.milliseconds) ms; "
                                        + "\(context)\n\(run.trace.tree)", file: file, line: line)
            XCTAssertLessThanOrEqual(ms, root.cost.milliseconds, "\(name): the cost is the measured time less the hooks'; "
                                     + "\(context)\n\(run.trace.tree)", file: file, line: line)
            XCTAssertLessThan(ms, 50 * untracedMs + 500, "\(name) untraced \(untracedMs) ms; \(context)\n\(run.trace.tree)",
                              file: file, line: line)
        }
    }

    /// The functions muted whole (their outer calls too).
    private func mutedNames(_ run: Run) -> [String] {
        let symbols = Symbolicator(modules: run.trace.trace.modules, warn: { _ in })
        return run.trace.trace.muted.filter { $0.insideLevel == nil }
            .map { symbols.symbolicate($0.function, atTick: $0.mutedTick).name }.sorted()
    }

    /// The functions muted only inside their own calls (sleds: docs/design.md, "Adaptive muting").
    private func mutedInside(_ run: Run) -> [String] {
        let symbols = Symbolicator(modules: run.trace.trace.modules, warn: { _ in })
        return run.trace.trace.muted.filter { $0.insideLevel != nil }
            .map { symbols.symbolicate($0.function, atTick: $0.mutedTick).name }.sorted()
    }

    /// One shape on every build: untraced, traced with muting on and off, compared.
    private func checkShape(_ arguments: [String], roots: [String], threshold: Double, threads: String = "main",
                            neverMuted: Set<String>, file: StaticString = #filePath, line: UInt = #line) throws {
        for build in try builds(file: file, line: line) {
            let untraced = try untracedTimes(build, arguments)
            let on = try traced(build, arguments, mute: "auto", threshold: "\(threshold)ms", threads: threads, file: file, line: line)
            let off = try traced(build, arguments, mute: "off", threshold: "\(threshold)ms", threads: threads, file: file, line: line)
            let muted = mutedNames(on)
            let context = "\(build.label) \(arguments): untraced \(untraced), traced \(fixtureTimes(on.stdout)), muted \(muted)"
            XCTAssertTrue(neverMuted.isDisjoint(with: muted), "a recursive function was muted; \(context)", file: file, line: line)
            // With sleds its millions of fast inner calls stop being timed; hooks time them all.
            let inside = Set(mutedInside(on))
            if build.compiler.hooks {
                XCTAssertTrue(inside.isEmpty, "hooks have no muting inside a recursion; \(context)", file: file, line: line)
            } else {
                XCTAssertFalse(neverMuted.isDisjoint(with: inside), "muted inside: \(inside); \(context)", file: file, line: line)
            }
            assertSameSlowCalls(on, off, thresholdMs: threshold, context: context, file: file, line: line)
            for root in roots {
                guard let ms = untraced[root] else {
                    XCTFail("no untraced time of \(root); \(context)", file: file, line: line)
                    continue
                }
                assertRootCost(on, root, untracedMs: ms, context: context, file: file, line: line)
            }
        }
    }

    /// nap(): every 2^13-th node of a 2^20-node tree sleeps 1 ms, so a call at level L holds at
    /// least 2^(7-L) - 1 sleeps: levels 0 to 4 cost at least 7 ms, over the 5 ms threshold, whatever
    /// the machine does. Every one of those 31 calls is recorded, muting on or off, on every build.
    private let napArguments = ["20", "13"]
    private func assertEverySlowNapRecorded(_ run: Run, perThread threads: Int = 1, context: String,
                                            file: StaticString = #filePath, line: UInt = #line) {
        let text = "\(context)\n\(run.trace.tree)"
        for level in 0...4 {
            let calls = run.trace.calls.filter { $0.name == "nap" && $0.depth == level }
            XCTAssertEqual(calls.count, threads << level, "level \(level); \(text)", file: file, line: line)
            // The measured time holds the sleeps; the cost, with the hooks' calibrated cost taken
            // out, may lose a little more than they cost here (docs/design.md, "Overhead compensation").
            let floor = Double((1 << (7 - level)) - 1)
            for call in calls {
                XCTAssertGreaterThanOrEqual(call.cost.milliseconds, floor, "level \(level); \(text)", file: file, line: line)
                XCTAssertGreaterThanOrEqual(call.reportedCost.milliseconds, 0.8 * floor, "level \(level); \(text)",
                                            file: file, line: line)
            }
        }
        XCTAssertEqual(run.shape.nestingErrors.count, 0, "depth gaps:\n\(run.shape.explain(run.shape.nestingErrors))\n\(text)",
                       file: file, line: line)
        XCTAssertFalse(run.trace.calls.contains { $0.unwound || $0.unfinished }, text, file: file, line: line)
        XCTAssertFalse(mutedNames(run).contains("nap"), text, file: file, line: line)
    }

    func testEverySlowRecursiveCallIsRecordedWhileMuting() throws {
        for build in try builds() {
            for mute in ["auto", "off"] {
                let run = try traced(build, ["sleepy"] + napArguments, mute: mute, threshold: "5ms")
                assertEverySlowNapRecorded(run, context: "\(build.label) mute \(mute): muted \(mutedNames(run))")
            }
        }
    }

    /// The same on two threads at once, each recording (CALLTRACE_THREADS=all).
    func testEverySlowRecursiveCallIsRecordedOnTwoThreads() throws {
        for build in try builds() {
            let run = try traced(build, ["threads"] + napArguments, mute: "auto", threshold: "5ms", threads: "all")
            let context = "\(build.label): muted \(mutedNames(run))"
            assertEverySlowNapRecorded(run, perThread: 2, context: context)
            let streams = Set(run.trace.calls.filter { $0.name == "nap" && $0.depth == 0 }.map(\.stream))
            XCTAssertEqual(streams.count, 2, "a root call on each thread; \(context)\n\(run.trace.tree)")
        }
    }

    /// A recursive function called again and again from the top: each root call is recorded, the
    /// last as the first (muting it between its calls would hide the later ones).
    func testRepeatedRecursiveRootCallsAreAllRecorded() throws {
        for build in try builds() {
            let run = try traced(build, ["repeat"] + napArguments + ["3"], mute: "auto", threshold: "5ms")
            assertEverySlowNapRecorded(run, perThread: 3, context: "\(build.label): muted \(mutedNames(run))")
        }
    }

    /// Real recursion, where the work is computation: the recursive functions stay timed, the tree
    /// with muting on holds what the tree with muting off holds (up to the noise of two runs), and
    /// each root call's cost is about its untraced time.
    func testTreeWalkAndQuicksortKeepTheirSlowCalls() throws {
        try checkShape(["walk_sort", "22", "600000"], roots: ["walk", "sort"], threshold: 2,
                       neverMuted: ["walk", "sort"])
    }

    func testFibKeepsItsSlowCalls() throws {
        try checkShape(["fib", "32"], roots: ["fib"], threshold: 2, neverMuted: ["fib"])
    }

    func testMutualRecursionKeepsItsSlowCalls() throws {
        try checkShape(["mutual", "31"], roots: ["even"], threshold: 2, neverMuted: ["even", "odd"])
    }

    func testRecursionThroughAFunctionPointerKeepsItsSlowCalls() throws {
        try checkShape(["fnptr", "31"], roots: ["fib_ptr"], threshold: 2, neverMuted: ["fib_ptr"])
    }
}
