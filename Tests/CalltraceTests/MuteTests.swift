import CalltraceKit
import Foundation
import XCTest

/// Adaptive muting (docs/design.md, "Adaptive muting"): functions that ran very often and never
/// came near the threshold stop being timed, their hook calls patched out of the running code, on
/// gcc and clang builds; the program computes and prints exactly what it does untraced; their time
/// stays in their callers. Fixture: Fixtures/mute.c.
final class MuteTests: XCTestCase {
    /// The fixture's tiny functions (helper only exists apart with gcc's hooks, which instrument its
    /// inlined copies in left and right; clang's hooks and sleds come after inlining).
    private func tinyFunctions(_ compiler: Compiler) -> Set<String> {
        compiler.instrumentsInlinedCalls ? ["tiny", "tiny_void", "left", "right", "helper"] : ["tiny", "tiny_void", "left", "right"]
    }

    private func mutedNames(_ trace: RecordedTrace) -> [String: MutedFunction] {
        let symbols = Symbolicator(modules: trace.trace.modules, warn: { _ in })
        return Dictionary(trace.trace.muted.map { (symbols.symbolicate($0.function, atTick: $0.mutedTick).name, $0) },
                          uniquingKeysWith: { first, _ in first })
    }

    /// A muted function's calls may have been recorded before it was muted (a preempted call on a
    /// busy machine), never one that started after.
    private func assertNothingTimedAfterMuting(_ trace: RecordedTrace, context: String,
                                               file: StaticString = #filePath, line: UInt = #line) {
        for muted in trace.trace.muted {
            let late = trace.trace.records.filter { $0.function == muted.function && $0.startTick >= muted.mutedTick }
            XCTAssertEqual(late.count, 0, "calls of 0x\(String(muted.function, radix: 16)) timed after muting; \(context)",
                           file: file, line: line)
        }
    }

    /// Runs the fixture traced and untraced and checks what every muting run must show: the same
    /// output, and the fixture's tiny functions muted (those and no others).
    private func runMuted(_ fixture: Fixture, _ compiler: Compiler, _ arguments: [String], environment: [String: String],
                          label: String, traceName: String = "run", file: StaticString = #filePath, line: UInt = #line)
        throws -> (result: CommandResult, trace: RecordedTrace, muted: [String: MutedFunction], context: String) {
        let untraced = try fixture.runUntraced(arguments)
        let (result, url) = try fixture.run(arguments, environment: environment, traceName: traceName)
        XCTAssertEqual(result.status, 0, "\(label): \(result)", file: file, line: line)
        XCTAssertEqual(result.stdout, untraced.stdout, "\(label): muting changed the program's output", file: file, line: line)
        let trace = try RecordedTrace(url)
        let muted = mutedNames(trace)
        let context = "\(label): muted \(muted.keys.sorted())\n\(trace.tree)"
        XCTAssertEqual(Set(muted.keys), tinyFunctions(compiler), context, file: file, line: line)
        return (result, trace, muted, context)
    }

    /// The loop's time as the fixture measured it (its stderr "loop_ns N").
    private func loopMs(_ stderr: String) -> Double? {
        for line in stderr.split(separator: "\n") where line.hasPrefix("loop_ns ") {
            return Double(line.dropFirst(8)).map { $0 / 1e6 }
        }
        return nil
    }

    /// The fixture built with no instrumentation at all: the program's own speed.
    private func plainLoopMs(_ compiler: Compiler) throws -> Double {
        let directory = Workspace.directory("mute-plain-\(compiler.rawValue)")
        let binary = directory.appendingPathComponent("mute-plain")
        let build = try Command.run(try which(compiler.cc),
                                    ["-O2", Workspace.fixtures.appendingPathComponent("mute.c").path,
                                     "-o", binary.path, "-lpthread"])
        XCTAssertEqual(build.status, 0, build.description)
        var best = Double.infinity
        for _ in 0..<3 {
            let run = try Command.run(binary.path, ["hot", "3000000"])
            if let ms = loopMs(run.stderr) { best = min(best, ms) }
        }
        return best
    }

    func testHotFastFunctionsAreMutedAndTheirTimeStaysInTheCaller() throws {
        // gcc -fno-plt calls the hooks through their GOT slots (ff 15) and tail-jumps the same way (ff 25).
        let builds: [(Compiler, [String])] = Compiler.allCases.map { ($0, []) } + [(.gccHooks, ["-fno-plt"])]
        for (compiler, extra) in builds {
            let fixture = try Fixture.build(["mute.c"], compiler: compiler, flags: ["-O2", "-g"] + extra,
                                            name: "mute" + extra.joined())
            let (result, trace, muted, context) = try runMuted(fixture, compiler, ["hot", "3000000"],
                                                               environment: ["CALLTRACE_THRESHOLD": "10ms"],
                                                               label: "\(compiler) \(extra)")
            for (name, function) in muted {
                // Every site verified and patched: no in-hook check needed (gcc's tail-called exit
                // hook in tiny_void included, and helper's copies inlined into left and right).
                XCTAssertTrue(function.patched, "\(name) \(function.methodText); \(context)")
                XCTAssertFalse(function.inHookCheck, "\(name) \(function.methodText); \(context)")
                XCTAssertGreaterThanOrEqual(function.estimatedCalls, 2_000, "\(name); \(context)")
                XCTAssertGreaterThanOrEqual(function.sitesPatched, 2, "\(name); \(context)")
                XCTAssertEqual(function.sleds, !compiler.hooks, "\(name): sleds patched out; \(context)")
            }
            XCTAssertEqual(trace.trace.header.muteMode, 2, context)
            XCTAssertEqual(Int(trace.trace.header.mutedCount), muted.count, context)
            XCTAssertFalse(trace.calls.contains { $0.unwound || $0.unfinished }, "no frame left behind shows; \(context)")
            assertNothingTimedAfterMuting(trace, context: context)

            // The muted calls' time is the caller's: root holds its 30 + 15 ms of sleep and the
            // loop, which costs at least what the uninstrumented program's loop costs (half of it,
            // for a machine that was faster for the plain run).
            guard let root = trace.calls(named: "root").first else {
                XCTFail("root missing; \(context)")
                continue
            }
            let plain = try plainLoopMs(compiler)
            XCTAssertGreaterThanOrEqual(root.cost.milliseconds, 45 + plain * 0.5, "plain loop \(plain) ms; \(context)")
            XCTAssertLessThan(root.cost.milliseconds, 3000, context)
            if let traced = loopMs(result.stderr) {
                XCTAssertLessThan(root.cost.milliseconds, 45 + traced + 500, context)
            }
        }
    }

    /// gcc's hooks instrument helper's inlined copies in left and right. Only left runs before
    /// helper is muted; the copy in right is learned when it first runs and patched then, not left
    /// to the in-hook check.
    func testSitesFirstRunAfterMutingArePatchedThen() throws {
        let fixture = try Fixture.build(["mute.c"], compiler: .gccHooks)
        let untraced = try fixture.runUntraced(["late", "2000000"])
        let (result, url) = try fixture.run(["late", "2000000"])
        XCTAssertEqual(result.stdout, untraced.stdout, result.description)
        let trace = try RecordedTrace(url)
        let muted = mutedNames(trace)
        let context = "muted \(muted)\n\(trace.tree)"
        XCTAssertEqual(Set(muted.keys), ["left", "right", "helper"], context)
        guard let helper = muted["helper"] else { return }
        XCTAssertTrue(helper.patched && !helper.inHookCheck, context)
        XCTAssertEqual(helper.sitesPatched, 4, "enter and exit in left, then in right; \(context)")
        XCTAssertFalse(trace.calls.contains { $0.unwound }, context)
    }

    func testMuteOffKeepsEveryFunctionTimed() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["mute.c"], compiler: compiler)
            let untraced = try fixture.runUntraced(["hot", "1000000"])
            let (result, url) = try fixture.run(["hot", "1000000"], environment: ["CALLTRACE_MUTE": "off"])
            XCTAssertEqual(result.stdout, untraced.stdout, "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.trace.muted.count, 0, "\(compiler): \(trace.trace.muted)")
            XCTAssertEqual(trace.trace.header.muteMode, 1, "\(compiler)")
            XCTAssertEqual(trace.trace.header.mutedCount, 0, "\(compiler)")
        }
    }

    func testThresholdZeroNeverMutes() throws {
        let fixture = try Fixture.build(["mute.c"], compiler: .gcc)
        let (result, url) = try fixture.run(["hot", "120000"], environment: ["CALLTRACE_THRESHOLD": "0"])
        XCTAssertEqual(result.status, 0, result.description)
        let trace = try TraceReader.read(path: url.path, options: TraceReader.Options(keepCalls: false))
        XCTAssertEqual(trace.muted.count, 0)
        XCTAssertEqual(trace.header.mutedCount, 0)
        XCTAssertGreaterThanOrEqual(trace.callCount, 120_000 * 4, "every call recorded")
    }

    /// Several threads run the tiny functions while the drain thread patches them: every thread
    /// computes what it computes untraced, and no frame of a muted function shows up unwound.
    func testThreadsRunTheCodeWhileItIsPatched() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["mute.c"], compiler: compiler)
            for round in 0..<2 {
                let (_, trace, _, context) = try runMuted(fixture, compiler, ["threads", "4", "2000000"],
                                                          environment: ["CALLTRACE_THREADS": "all"],
                                                          label: "\(compiler) round \(round)", traceName: "run\(round)")
                XCTAssertFalse(trace.calls.contains { $0.unwound }, context)
                assertNothingTimedAfterMuting(trace, context: context)
                XCTAssertEqual(trace.calls(named: "root").count, 1, context)
            }
        }
    }

    /// A hot function that is slow now and then (every 1000th call sleeps 2 ms, recorded at 1 ms)
    /// comes near the threshold far too often to be muted: every slow call is still recorded. On a
    /// busy machine a fast call preempted for a millisecond is recorded too (it took that long):
    /// the 300 that slept are the lower bound, exact; the extras are bounded loosely.
    func testSometimesSlowFunctionIsNotMuted() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["mute.c"], compiler: compiler)
            let (result, url) = try fixture.run(["sometimes", "300000"], environment: ["CALLTRACE_THRESHOLD": "1ms"])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            XCTAssertFalse(mutedNames(trace).keys.contains("sometimes"), "\(compiler)")
            let slow = trace.calls(named: "sometimes")
            let slept = slow.filter { $0.cost.milliseconds >= 2 }
            XCTAssertGreaterThanOrEqual(slept.count, 300, "\(compiler): \(slept.count) calls of 2 ms or more recorded")
            XCTAssertLessThanOrEqual(slow.count, 400, "\(compiler): \(slow.count) slow calls recorded")
        }
    }

    /// CALLTRACE_MUTE=hook never patches: what a W^X policy leaves (mprotect refused). The hooks
    /// check for muted functions instead, and the program still computes the same.
    func testInHookCheckWhenTheCodeIsNotPatched() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["mute.c"], compiler: compiler)
            let (_, trace, muted, context) = try runMuted(fixture, compiler, ["threads", "2", "1000000"],
                                                          environment: ["CALLTRACE_MUTE": "hook", "CALLTRACE_THREADS": "all"],
                                                          label: "\(compiler)")
            XCTAssertTrue(muted.values.allSatisfy { $0.inHookCheck && !$0.patched && $0.sitesPatched == 0 }, context)
            XCTAssertEqual(trace.trace.header.muteMode, 3, context)
            XCTAssertFalse(trace.calls.contains { $0.unwound }, context)
        }
    }

    /// A fork child runs its parent's patched code: its own trace says what was muted, and it
    /// computes what it computes untraced.
    func testForkChildTraceListsWhatItsParentMuted() throws {
        let fixture = try Fixture.build(["mute.c"], compiler: .gcc)
        let untraced = try fixture.runUntraced(["fork", "1000000"])
        let template = fixture.directory.appendingPathComponent("mutefork-%p.trace").path
        let (result, _) = try fixture.run(["fork", "1000000"], environment: ["CALLTRACE_OUTPUT": template])
        XCTAssertEqual(result.status, 0, result.description)
        func checksums(_ text: String) -> [String] {
            text.split(separator: "\n").map { line in
                let words = line.split(separator: " ")
                return words.count == 3 ? "\(words[0]) \(words[2])" : String(line)
            }.sorted()
        }
        XCTAssertEqual(checksums(result.stdout), checksums(untraced.stdout), result.description)
        var checked: [String] = []
        for line in result.stdout.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count == 3 else { continue }
            checked.append(String(words[0]))
            let url = fixture.directory.appendingPathComponent("mutefork-\(words[1]).trace")
            let trace = try RecordedTrace(url)
            let muted = mutedNames(trace)
            XCTAssertEqual(Set(muted.keys), tinyFunctions(.gcc), "\(words[0]):\n\(trace.tree)")
            XCTAssertEqual(Int(trace.trace.header.mutedCount), muted.count, "\(words[0])")
            assertNothingTimedAfterMuting(trace, context: "\(words[0])")
            XCTAssertFalse(trace.calls.contains { $0.unwound }, "\(words[0]):\n\(trace.tree)")
        }
        XCTAssertEqual(checked.sorted(), ["child", "parent"], result.description)
    }

    func testInfoListsMutedFunctionsAndReportSaysSo() throws {
        let fixture = try Fixture.build(["mute.c"], compiler: .gccHooks)
        let (_, url) = try fixture.run(["hot", "2000000"])
        let muted = try RecordedTrace(url).trace.muted.count
        XCTAssertGreaterThan(muted, 0)
        let info = try calltrace(["info", url.path])
        XCTAssertEqual(info.status, 0, info.description)
        XCTAssertTrue(info.stdout.contains("muting:"), info.stdout)
        XCTAssertTrue(info.stdout.contains("\(muted) muted"), info.stdout)
        XCTAssertTrue(info.stdout.contains("muted functions"), info.stdout)
        for name in ["tiny", "tiny_void", "left", "right", "helper"] {
            XCTAssertTrue(info.stdout.contains("  \(name): muted "), "\(name) missing:\n\(info.stdout)")
        }
        let report = try calltrace(["report", url.path])
        XCTAssertEqual(report.status, 0, report.description)
        let lines = report.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "\(muted) functions muted after running often and fast: from then on their calls, "
                       + "slow or not, are part of their callers' costs (CALLTRACE_MUTE=off times every call)", report.stdout)
        // gcc's code keeps part of the instrumentation's cost: both say so, and how to remove it.
        XCTAssertTrue(lines.count > 1 && lines[1].hasPrefix("gcc built them with hooks: ")
                      && lines[1].contains("calltrace exclude-list \(url.path) -o hot.txt"), report.stdout)
        XCTAssertTrue(info.stdout.contains("(gcc built them with hooks: "), info.stdout)
        // clang's hooks, and sleds with either compiler: no such line (a muted function with sleds
        // costs what it does uninstrumented, but for a jump).
        for compiler in [Compiler.clangHooks, .gcc, .clang] {
            let other = try Fixture.build(["mute.c"], compiler: compiler)
            let (_, otherURL) = try other.run(["hot", "2000000"], traceName: "\(compiler)")
            let otherReport = try calltrace(["report", otherURL.path])
            XCTAssertTrue(otherReport.stdout.hasPrefix("4 functions muted"), "\(compiler):\n\(otherReport.stdout)")
            XCTAssertFalse(otherReport.stdout.contains("gcc built"), "\(compiler):\n\(otherReport.stdout)")
            let otherInfo = try calltrace(["info", otherURL.path])
            XCTAssertFalse(otherInfo.stdout.contains("gcc built"), "\(compiler):\n\(otherInfo.stdout)")
        }

        // Nothing muted: no such line.
        let (_, offURL) = try fixture.run(["hot", "2000000"], environment: ["CALLTRACE_MUTE": "off"], traceName: "off")
        let off = try calltrace(["report", offURL.path])
        XCTAssertFalse(off.stdout.contains("muted"), off.stdout)
    }

    /// Libraries loaded and unloaded by two threads while a hot function in them is muted: the
    /// drain thread never reads or patches code that dlclose is taking away (a fault there would
    /// kill the program), and the program's output is its own.
    func testMutingWhileLibrariesComeAndGo() throws {
        for compiler in Compiler.allCases {
            let plugin = try Fixture.build(["plugin_hot.c"], compiler: compiler, flags: ["-O2", "-shared", "-fPIC"],
                                           name: "libplugin_hot.so")
            let host = try Fixture.build(["mute_dlhost.c"], compiler: compiler)
            for run in 0..<2 {
                let (result, url) = try host.run([plugin.binary.path], environment: ["CALLTRACE_THRESHOLD": "10ms",
                                                                                     "CALLTRACE_THREADS": "all"])
                XCTAssertEqual(result.status, 0, "\(compiler) run \(run): \(result)")
                XCTAssertEqual(result.stdout, "mute_dlhost: 1\n", "\(compiler) run \(run): \(result)")
                let trace = try TraceReader.read(path: url.path)
                XCTAssertTrue(trace.header.closedCleanly, "\(compiler) run \(run)")
                XCTAssertGreaterThanOrEqual(trace.header.mutedCount, 1, "hot_leaf muted; \(compiler) run \(run)")
            }
        }
    }
}
