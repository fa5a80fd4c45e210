import CalltraceKit
import Foundation
import XCTest

/// CALLTRACE_FILTER (`record --filter`): what is recorded, chosen without a rebuild, on gcc and
/// clang builds. `-NAME` excludes a function (never timed, its time is its caller's, its hook calls
/// patched out after its first call), a plain NAME records only the calls inside its calls; C++
/// names match as `report` prints them. A pattern that matches nothing, or a spec that is not
/// valid, warns once and the program runs as it would. Fixtures: Fixtures/filter.c, filter.cpp,
/// filter_jump.c, filter_throw.cpp, filter_dlhost.c.
final class FilterTests: XCTestCase {
    /// Runs the fixture at threshold 0 with `spec`, checks it ran as it does untraced, and reads
    /// the trace back.
    private func run(_ fixture: Fixture, _ spec: String, arguments: [String] = [], extra: [String: String] = [:],
                     label: String, file: StaticString = #filePath, line: UInt = #line)
        throws -> (result: CommandResult, trace: RecordedTrace, url: URL) {
        let untraced = try fixture.runUntraced(arguments)
        let (result, url) = try fixture.run(arguments, environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_FILTER": spec]
                                                .merging(extra) { _, new in new })
        XCTAssertEqual(result.status, untraced.status, "\(label): \(result)", file: file, line: line)
        XCTAssertEqual(result.stdout, untraced.stdout, "\(label): the filter changed the program's output", file: file, line: line)
        return (result, try RecordedTrace(url), url)
    }

    private func names(_ trace: RecordedTrace) -> Set<String> { Set(trace.calls.map(\.name)) }

    private func warnings(_ stderr: String) -> [Substring] {
        stderr.split(separator: "\n").filter { $0.contains("CALLTRACE_FILTER") }
    }

    func testAnExcludedFunctionIsGoneAndItsTimeIsItsCallers() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["filter.c"], compiler: compiler)
            let label = "\(compiler) -slow_part"
            let (result, trace, url) = try run(fixture, "-slow_part", label: label)
            XCTAssertEqual(warnings(result.stderr), [], label)
            XCTAssertEqual(names(trace), ["main", "work", "leaf", "other", "nap"], "\(label)\n\(trace.tree)")
            // work's cost has slow_part's 20 ms in it, as its own time.
            assertCost(trace.calls(named: "work").first, atLeastMs: 20, below: 2000, in: trace)
            assertCost(trace.calls(named: "main").first, atLeastMs: 25, below: 2000, in: trace)
            XCTAssertEqual(trace.calls(named: "leaf").count, 1001, label)
            let report = try calltrace(["report", url.path])
            XCTAssertTrue(report.stdout.hasPrefix("recorded with CALLTRACE_FILTER=-slow_part: 1 function excluded"),
                          report.stdout)
            let info = try json(try calltrace(["info", url.path, "--format", "json"]))
            XCTAssertEqual(info["filter"] as? String, "-slow_part (1 function excluded, 0 included)", "\(info)")
        }
    }

    func testAnIncludedFunctionRecordsOnlyItsCallsAndTheirCallees() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["filter.c"], compiler: compiler)
            let label = "\(compiler) work"
            let (result, trace, _) = try run(fixture, "work", label: label)
            XCTAssertEqual(warnings(result.stderr), [], label)
            XCTAssertEqual(names(trace), ["work", "slow_part", "leaf"], "\(label)\n\(trace.tree)")
            XCTAssertEqual(trace.calls.filter { $0.treeDepth == 0 }.map(\.name), ["work"], "\(label)\n\(trace.tree)")
            // other's call of leaf is outside work: not recorded.
            XCTAssertEqual(trace.calls(named: "leaf").count, 1000, label)
            assertCost(trace.calls(named: "slow_part").first, atLeastMs: 20, below: 2000, in: trace)
        }
    }

    func testExclusionsAndInclusionsCombine() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["filter.c"], compiler: compiler)
            let label = "\(compiler) work,-slow_part"
            // Spaces around the items are allowed.
            let (result, trace, url) = try run(fixture, "work, -slow_part", label: label)
            XCTAssertEqual(warnings(result.stderr), [], label)
            XCTAssertEqual(names(trace), ["work", "leaf"], "\(label)\n\(trace.tree)")
            assertCost(trace.calls(named: "work").first, atLeastMs: 20, below: 2000, in: trace)
            let info = try calltrace(["info", url.path])
            XCTAssertTrue(info.stdout.contains("filter:       work, -slow_part (1 function excluded, 1 included)\n"),
                          info.stdout)
            // report --format json carries it as the text header does.
            let report = try json(try calltrace(["report", url.path, "--format", "json"]))
            let filter = try XCTUnwrap(report["filter"] as? [String: Any], "\(report)")
            XCTAssertEqual(filter["spec"] as? String, "work, -slow_part", "\(filter)")
            XCTAssertEqual(filter["excluded_functions"] as? Int, 1, "\(filter)")
            XCTAssertEqual(filter["included_functions"] as? Int, 1, "\(filter)")
            XCTAssertEqual(filter["text"] as? String, try calltrace(["report", url.path]).stdout
                               .split(separator: "\n").first.map(String.init), "\(filter)")
        }
    }

    /// `record --filter` hands the spec to the runtime, a leading '-' included.
    func testRecordTakesTheFilterAsAnOption() throws {
        let fixture = try Fixture.build(["filter.c"], compiler: .gcc, wrapper: false)
        let result = try RecordCommand.run(["-t", "0", "--filter", "-slow_part,-leaf", "-o", "filtered.trace"],
                                           [fixture.binary.path], in: fixture.directory)
        XCTAssertEqual(result.status, 0, result.description)
        let trace = try RecordedTrace(fixture.directory.appendingPathComponent("filtered.trace"))
        XCTAssertEqual(names(trace), ["main", "work", "other", "nap"], trace.tree)
        let bad = try RecordCommand.run(["--filter", "a,,b"], [fixture.binary.path], in: fixture.directory)
        XCTAssertNotEqual(bad.status, 0, bad.description)
        XCTAssertTrue(bad.stderr.contains("--filter 'a,,b' is not valid"), bad.stderr)
    }

    /// C++ names as `report` prints them: a glob with `::` matches the demangled name, with or
    /// without its parameters.
    func testCppNamesMatchAsTheReportPrintsThem() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["filter.cpp"], compiler: compiler, cxx: true, name: "filtercpp")
            var label = "\(compiler) -ns::Klass::method*"
            var (result, trace, _) = try run(fixture, "-ns::Klass::method*", label: label)
            XCTAssertEqual(warnings(result.stderr), [], label)
            XCTAssertEqual(names(trace), ["main", "helper(int)"], "\(label)\n\(trace.tree)")
            // helper's own 4 ms and method_a's 3 ms inside it.
            assertCost(trace.calls(named: "helper(int)").first, atLeastMs: 7, below: 2000, in: trace)
            label = "\(compiler) helper,-ns::Klass::method_b"
            (result, trace, _) = try run(fixture, "helper,-ns::Klass::method_b", label: label)
            XCTAssertEqual(warnings(result.stderr), [], label)
            XCTAssertEqual(trace.outline, ["helper(int)", "  ns::Klass::method_a()"], "\(label)\n\(trace.tree)")
        }
    }

    func testAPatternThatMatchesNothingWarnsOnceAndTheProgramRuns() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["filter.c"], compiler: compiler)
            let label = "\(compiler) -no_such_function*,-nap"
            let (result, trace, _) = try run(fixture, "-no_such_function*,-nap", label: label)
            let lines = warnings(result.stderr)
            XCTAssertEqual(lines.count, 1, "\(label): \(result.stderr)")
            XCTAssertTrue(lines.first?.contains("'-no_such_function*' matches no function") ?? false, result.stderr)
            XCTAssertEqual(names(trace), ["main", "work", "slow_part", "leaf", "other"], "\(label)\n\(trace.tree)")
        }
    }

    func testABadSpecWarnsOnceAndEveryCallIsRecorded() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["filter.c"], compiler: compiler)
            for spec in ["a,,b", "-", "work,"] {
                let label = "\(compiler) \(spec)"
                let (result, trace, url) = try run(fixture, spec, label: label)
                let lines = warnings(result.stderr)
                XCTAssertEqual(lines.count, 1, "\(label): \(result.stderr)")
                XCTAssertTrue(lines.first?.contains("CALLTRACE_FILTER=\(spec) is not valid") ?? false, result.stderr)
                XCTAssertEqual(names(trace), ["main", "work", "slow_part", "leaf", "other", "nap"], "\(label)\n\(trace.tree)")
                let info = try calltrace(["info", url.path])
                XCTAssertFalse(info.stdout.contains("filter:"), info.stdout)
            }
        }
    }

    /// A fork child keeps its parent's filter (the same patched code, its thread's open
    /// included calls) and its own trace names it. fork.c: the child is born inside spawn_child.
    func testAForkChildKeepsTheFilterAndItsTraceNamesIt() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["fork.c"], compiler: compiler, name: "filterfork")
            for old in (try? FileManager.default.contentsOfDirectory(atPath: fixture.directory.path)) ?? []
            where old.hasSuffix(".trace") {
                try FileManager.default.removeItem(at: fixture.directory.appendingPathComponent(old))
            }
            let template = fixture.directory.appendingPathComponent("fork-%p.trace").path
            let result = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_OUTPUT": template,
                                                       "CALLTRACE_FILTER": "spawn_child,-child_work"]).result
            XCTAssertEqual(result.status, 0, result.description)
            let traces = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path)
                .filter { $0.hasPrefix("fork-") && $0.hasSuffix(".trace") }.sorted()
            XCTAssertEqual(traces.count, 2, "\(compiler): \(traces)")
            for name in traces {
                let url = fixture.directory.appendingPathComponent(name)
                let trace = try RecordedTrace(url)
                XCTAssertEqual(trace.outline, ["spawn_child"], "\(compiler) \(name)\n\(trace.tree)")
                let info = try calltrace(["info", url.path])
                XCTAssertTrue(info.stdout.contains("filter:       spawn_child,-child_work (1 function excluded, 1 included)"),
                              "\(compiler) \(name): \(info.stdout)")
            }
        }
    }

    /// "On their thread": with every thread recorded, an included function's thread records its
    /// calls, the others nothing. threads.c: late_thread runs late_job on the thread "late".
    func testInclusionIsPerThread() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["threads.c"], compiler: compiler, name: "filterthreads")
            let (_, trace, _) = try run(fixture, "late_thread", extra: ["CALLTRACE_THREADS": "all"], label: "\(compiler)")
            XCTAssertEqual(trace.outline, ["late_thread", "  late_job"], "\(compiler)\n\(trace.tree)")
        }
    }

    /// A longjmp out of an included call ends it, as it ends its frames: the calls after the jump,
    /// outside every included call, are not recorded, and a later included call records again.
    /// filter_jump.c: four rounds of inside -> bail, which jumps back out of inside; after each,
    /// after (or, the last time, first the exit of the function the jump landed in).
    func testALongjmpOutOfAnIncludedCallEndsIt() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["filter_jump.c"], compiler: compiler)
            var (result, trace, _) = try run(fixture, "inside", label: "\(compiler)")
            XCTAssertEqual(warnings(result.stderr), [], result.stderr)
            let round = ["inside", "  leaf", "  bail", "    leaf"]
            XCTAssertEqual(trace.outline, Array([[String]](repeating: round, count: 4).joined()), "\(compiler)\n\(trace.tree)")
            XCTAssertEqual(trace.calls(named: "after").count, 0, "\(compiler)\n\(trace.tree)")
            // A jump that stays inside an included call keeps it: the call after the jump is recorded.
            (result, trace, _) = try run(fixture, "inside,inside_keeps", label: "\(compiler) inside,inside_keeps")
            XCTAssertEqual(warnings(result.stderr), [], result.stderr)
            XCTAssertEqual(Array(trace.outline.suffix(4)), ["inside_keeps", "  bail", "    leaf", "  leaf"],
                           "\(compiler)\n\(trace.tree)")
            XCTAssertEqual(trace.calls(named: "after").count, 0, "\(compiler)\n\(trace.tree)")
        }
    }

    /// The same with a C++ exception thrown through an included call and caught outside it (g++
    /// runs the exit hooks as the exception passes, clang++ does not: its frames are closed as a
    /// longjmp's are). filter_throw.cpp.
    func testAnExceptionThrownOutOfAnIncludedCallEndsIt() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["filter_throw.cpp"], compiler: compiler, cxx: true)
            var (result, trace, _) = try run(fixture, "inside", label: "\(compiler)")
            XCTAssertEqual(warnings(result.stderr), [], result.stderr)
            let round = ["inside(int)", "  leaf(unsigned long)", "  thrower(int)", "    leaf(unsigned long)"]
            XCTAssertEqual(trace.outline, Array([[String]](repeating: round, count: 4).joined()), "\(compiler)\n\(trace.tree)")
            XCTAssertEqual(trace.calls(named: "after(int)").count, 0, "\(compiler)\n\(trace.tree)")
            // An exception caught inside an included call keeps it: the call in the handler is recorded.
            (result, trace, _) = try run(fixture, "inside,inside_keeps", label: "\(compiler) inside,inside_keeps")
            XCTAssertEqual(warnings(result.stderr), [], result.stderr)
            XCTAssertEqual(Array(trace.outline.suffix(4)),
                           ["inside_keeps(int)", "  thrower(int)", "    leaf(unsigned long)", "  leaf(unsigned long)"],
                           "\(compiler)\n\(trace.tree)")
            XCTAssertEqual(trace.calls(named: "after(int)").count, 0, "\(compiler)\n\(trace.tree)")
        }
    }

    /// A library loaded later with dlopen is filtered too, once the drain thread has matched its
    /// functions (filter_dlhost.c waits 200 ms after dlopen for it; plugin_a.c: alpha_work ->
    /// alpha_inner). Its pattern warned at start, when nothing loaded matched it.
    func testALibraryLoadedLaterIsFiltered() throws {
        for compiler in Compiler.allCases {
            let shared = ["-O2", "-g", "-shared", "-fPIC"]
            let alpha = try Fixture.build(["plugin_a.c"], compiler: compiler, flags: shared, name: "libplugin_a.so")
            let host = try Fixture.build(["filter_dlhost.c"], compiler: compiler)
            // Excluded: gone, its time its caller's.
            var (result, trace, _) = try run(host, "-alpha_inner", arguments: [alpha.binary.path], label: "\(compiler) -alpha_inner")
            XCTAssertEqual(warnings(result.stderr).count, 1, result.stderr)
            XCTAssertEqual(trace.outline, ["main", "  load_plugin", "  call_twice", "    alpha_work", "    alpha_work",
                                           "  after_load"], "\(compiler)\n\(trace.tree)")
            assertCost(trace.calls(named: "alpha_work").first, atLeastMs: 3, below: 2000, in: trace)
            // Included: only its calls are recorded from then on; main and load_plugin were open when
            // inclusion came on with the library, and are recorded as they end.
            (result, trace, _) = try run(host, "alpha_work", arguments: [alpha.binary.path], label: "\(compiler) alpha_work")
            XCTAssertEqual(warnings(result.stderr).count, 1, result.stderr)
            XCTAssertEqual(trace.outline, ["main", "  load_plugin", "  alpha_work", "    alpha_inner", "  alpha_work",
                                           "    alpha_inner"], "\(compiler)\n\(trace.tree)")
        }
    }

    /// gcc's hooks instrument the copies of a function gcc inlines, in other functions' bodies, with
    /// that function's own address: excluding it takes those out too. mute.c: helper is inlined into
    /// left and right (clang's hooks come after inlining, and sleds with either compiler: helper is
    /// not instrumented there at all).
    func testExcludingAFunctionTakesOutGccsInlinedCopiesOfIt() throws {
        let fixture = try Fixture.build(["mute.c"], compiler: .gccHooks, name: "filtermute")
        let (result, trace, _) = try run(fixture, "-helper,-tiny,-tiny_void", arguments: ["hot", "100000"], label: "gcc")
        XCTAssertEqual(warnings(result.stderr), [], result.stderr)
        XCTAssertEqual(names(trace), ["main", "root", "rounds", "now_ns", "sleep_ms", "left", "right", "slow_step"], trace.tree)
        XCTAssertEqual(trace.calls(named: "left").count, 100_000)
    }

    /// An excluded hot function costs what a muted one does: its hook calls are patched out after
    /// its first calls, muting on or off. leaf runs 20 M times; the fixture times the loop (its
    /// stderr "leaf_ns N", after a first loop of 5 M calls in which muting mutes it). Min of 5 runs
    /// each, interleaved (the machine is shared); on a quiet machine a call through the in-hook
    /// check costs about 14 ns, a timed one 20 ns, a patched one (muted or excluded) about 2 ns.
    func testAnExcludedHotFunctionCostsWhatAMutedOneDoes() throws {
        func leafNs(_ fixture: Fixture, _ environment: [String: String]) throws -> Double {
            let (result, _) = try fixture.run(["hot", "20000000"], environment: environment)
            XCTAssertEqual(result.status, 0, result.description)
            let value = result.stderr.split(separator: "\n").last { $0.hasPrefix("leaf_ns ") }
                .flatMap { Double($0.dropFirst(8)) }
            return try XCTUnwrap(value, result.stderr)
        }
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["filter.c"], compiler: compiler)
            var muted = Double.infinity, excluded = Double.infinity, excludedUnmuted = Double.infinity
            for _ in 0..<5 {
                muted = min(muted, try leafNs(fixture, ["CALLTRACE_THRESHOLD": "10ms"]))
                excluded = min(excluded, try leafNs(fixture, ["CALLTRACE_THRESHOLD": "10ms", "CALLTRACE_FILTER": "-leaf"]))
                excludedUnmuted = min(excludedUnmuted, try leafNs(fixture, ["CALLTRACE_THRESHOLD": "10ms",
                                                                            "CALLTRACE_FILTER": "-leaf", "CALLTRACE_MUTE": "off"]))
            }
            let bound = max(3 * muted, muted + 5)
            XCTAssertLessThan(excluded, bound, "\(compiler): excluded \(excluded) ns a call, muted \(muted)")
            XCTAssertLessThan(excludedUnmuted, bound, "\(compiler): excluded (muting off) \(excludedUnmuted) ns, muted \(muted)")
        }
    }

    private func json(_ result: CommandResult, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        XCTAssertEqual(result.status, 0, result.description, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                             result.stdout, file: file, line: line)
    }
}
