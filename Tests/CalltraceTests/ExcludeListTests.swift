import CalltraceKit
import Foundation
import XCTest

/// `calltrace exclude-list` lists the hot, always-fast functions of traces (the functions a default
/// run muted; those of a threshold-0 trace by count), and Scripts/calltrace-cc (CALLTRACE_EXCLUDE)
/// builds the program again without their hooks (gcc): the guide's second build (docs/guide.md).
final class ExcludeListTests: XCTestCase {
    /// Builds `source` through the wrapper with `compiler`, with CALLTRACE_EXCLUDE when `exclude` is given.
    private func build(_ source: String, compiler: Compiler, cxx: Bool = false, exclude: URL? = nil,
                       name: String, in directory: URL) throws -> (result: CommandResult, binary: URL) {
        try Workspace.requireProducts()
        let binary = directory.appendingPathComponent(name)
        var env = ["CALLTRACE_CC": try which(compiler.cc), "CALLTRACE_CXX": try which(compiler.cxx),
                   "CALLTRACE_INSTRUMENT": compiler.instrument, "CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path]
        if let exclude { env["CALLTRACE_EXCLUDE"] = exclude.path }
        let tool = Workspace.packageRoot.appendingPathComponent(cxx ? "Scripts/calltrace-c++" : "Scripts/calltrace-cc")
        let result = try Command.run(tool.path, ["-O2", "-g", Workspace.fixtures.appendingPathComponent(source).path,
                                                 "-o", binary.path], environment: env, currentDirectory: directory)
        return (result, binary)
    }

    /// `calltrace record -t <threshold>`: the program's result and its trace.
    private func record(_ binary: URL, threshold: String = "0", in directory: URL) throws
        -> (result: CommandResult, trace: RecordedTrace) {
        let trace = directory.appendingPathComponent(binary.lastPathComponent + ".trace")
        let result = try RecordCommand.run(["-t", threshold, "-o", trace.path], [binary.path], in: directory)
        XCTAssertEqual(result.status, 0, result.description)
        return (result, try RecordedTrace(trace))
    }

    private func excludeList(_ arguments: [String], in directory: URL) throws -> CommandResult {
        try calltrace(["exclude-list"] + arguments, in: directory)
    }

    /// The names of a list: each line without its comment, blank lines skipped.
    private func names(in list: URL) throws -> [String] {
        try String(contentsOf: list, encoding: .utf8).split(separator: "\n").compactMap { line in
            let name = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingCharacters(in: .whitespaces)
            return name.isEmpty ? nil : name
        }
    }

    func testHotTinyFunctionLosesItsHooksAndTheProgramPrintsTheSame() throws {
        let dir = Workspace.directory("exclude-gcc")
        let plain = try build("hot_leaf.c", compiler: .gcc, name: "hot_leaf", in: dir)
        XCTAssertEqual(plain.result.status, 0, plain.result.description)
        let first = try record(plain.binary, in: dir)
        XCTAssertEqual(first.trace.calls(named: "hot_step").count, 20_000, first.trace.tree)

        let list = dir.appendingPathComponent("exclude.txt")
        let made = try excludeList([dir.appendingPathComponent("hot_leaf.trace").path, "-o", list.path], in: dir)
        XCTAssertEqual(made.status, 0, made.description)
        // hot_step: hot and fast. mix: as hot and fast, but "mix" is part of mix_rows, which stays
        // instrumented. now_and_then: hot, but 0.4 % of its calls sleep 2 ms (over --outliers).
        let text = try String(contentsOf: list, encoding: .utf8)
        XCTAssertEqual(try names(in: list), ["hot_step"], text)
        XCTAssertTrue(made.stderr.contains("mix (in mix_rows)"), made.stderr)
        XCTAssertTrue(made.stderr.contains("1 function listed, 20000 of the trace's 60003 calls"), made.stderr)

        let rebuilt = try build("hot_leaf.c", compiler: .gcc, exclude: list, name: "hot_leaf_excluded", in: dir)
        XCTAssertEqual(rebuilt.result.status, 0, rebuilt.result.description)
        let second = try record(rebuilt.binary, in: dir)
        XCTAssertEqual(second.trace.calls(named: "hot_step").count, 0, "hot_step still hooked:\n\(second.trace.tree)")
        XCTAssertEqual(second.trace.calls(named: "mix").count, 19_998)
        XCTAssertEqual(second.trace.calls(named: "now_and_then").count, 20_000)
        XCTAssertEqual(second.trace.calls(named: "mix_rows").count, 3)
        XCTAssertEqual(second.result.stdout, first.result.stdout, "the program's output changed")
        XCTAssertTrue(first.result.stdout.hasPrefix("checksum "), first.result.stdout)
    }

    func testOptionsChooseWhatIsHotAndWhatIsFast() throws {
        let dir = Workspace.directory("exclude-options")
        let built = try build("hot_leaf.c", compiler: .gcc, name: "hot_leaf", in: dir)
        XCTAssertEqual(built.result.status, 0, built.result.description)
        let trace = dir.appendingPathComponent("hot_leaf.trace")
        _ = try record(built.binary, in: dir)

        // Every call may be slow: now_and_then joins hot_step.
        let lenient = try excludeList([trace.path, "--outliers", "100"], in: dir)
        XCTAssertEqual(lenient.status, 0, lenient.description)
        let listed = lenient.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ")[0] }
        XCTAssertEqual(Set(listed), ["hot_step", "now_and_then"], lenient.stdout)
        XCTAssertTrue(lenient.stdout.contains("now_and_then  # 20000 calls, longest "), lenient.stdout)

        // No function is called 30,000 times: an empty list (its header only) and a note.
        let none = try excludeList([trace.path, "--min-calls", "30000"], in: dir)
        XCTAssertEqual(none.status, 0, none.description)
        XCTAssertEqual(none.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }, [], none.stdout)
        XCTAssertTrue(none.stderr.contains("called 30000 times or more"), none.stderr)
    }

    func testCxxMethodIsListedAsGccNamesItAndTemplatesAreLeftOut() throws {
        let dir = Workspace.directory("exclude-cxx")
        let built = try build("hot_methods.cpp", compiler: .gcc, cxx: true, name: "hot_methods", in: dir)
        XCTAssertEqual(built.result.status, 0, built.result.description)
        let first = try record(built.binary, in: dir)
        let list = dir.appendingPathComponent("exclude.txt")
        let made = try excludeList([dir.appendingPathComponent("hot_methods.trace").path, "-o", list.path], in: dir)
        XCTAssertEqual(made.status, 0, made.description)
        XCTAssertEqual(try names(in: list), ["calc::Acc::step"])
        XCTAssertTrue(made.stderr.contains("1 hot, fast function left out whose name gcc prints differently"), made.stderr)

        let rebuilt = try build("hot_methods.cpp", compiler: .gcc, cxx: true, exclude: list,
                                name: "hot_methods_excluded", in: dir)
        XCTAssertEqual(rebuilt.result.status, 0, rebuilt.result.description)
        let second = try record(rebuilt.binary, in: dir)
        XCTAssertFalse(second.trace.calls.contains { $0.name.contains("Acc::step") }, second.trace.tree)
        XCTAssertEqual(second.trace.calls.filter { $0.name.contains("calc::twice") }.count, 20_000)
        XCTAssertEqual(second.result.stdout, first.result.stdout)
    }

    /// The two-build flow: one run with the default settings (the runtime mutes hot_step, called
    /// ten million times: long enough for the drain thread to see to it on a busy machine), its
    /// trace (or a directory of such traces) gives the list, and the rebuild leaves hot_step
    /// uninstrumented. now_and_then, whose calls sleep now and then, is never muted; mix, if it was,
    /// is left out as part of mix_rows' name.
    func testDefaultRunListsTheFunctionsItMuted() throws {
        let dir = Workspace.directory("exclude-default")
        let runs = dir.appendingPathComponent("runs")
        try FileManager.default.createDirectory(at: runs, withIntermediateDirectories: true)
        let built = try build("hot_leaf.c", compiler: .gcc, name: "hot_leaf", in: dir)
        XCTAssertEqual(built.result.status, 0, built.result.description)
        for run in 0..<2 {
            let trace = runs.appendingPathComponent("run\(run).trace")
            let result = try RecordCommand.run(["-o", trace.path], [built.binary.path, "20000", "10000000"], in: dir)
            XCTAssertEqual(result.status, 0, result.description)
            XCTAssertGreaterThanOrEqual(try RecordedTrace(trace).trace.muted.count, 1, "hot_step muted in run \(run)")
        }
        let list = dir.appendingPathComponent("exclude.txt")
        for given in [runs.appendingPathComponent("run0.trace").path, runs.path] {
            let made = try excludeList([given, "-o", list.path], in: dir)
            XCTAssertEqual(made.status, 0, made.description)
            let text = try String(contentsOf: list, encoding: .utf8)
            XCTAssertEqual(try names(in: list), ["hot_step"], "from \(given):\n\(text)\n\(made.stderr)")
            XCTAssertTrue(text.contains("hot_step  # "), text)
            XCTAssertTrue(text.contains(", muted"), text)
        }
        let rebuilt = try build("hot_leaf.c", compiler: .gcc, exclude: list, name: "hot_leaf_excluded", in: dir)
        XCTAssertEqual(rebuilt.result.status, 0, rebuilt.result.description)
        let second = try record(rebuilt.binary, in: dir)
        XCTAssertEqual(second.trace.calls(named: "hot_step").count, 0, "hot_step still hooked:\n\(second.trace.tree)")
        XCTAssertEqual(second.trace.calls(named: "now_and_then").count, 20_000)
        let untraced = try Command.run(built.binary.path, [], currentDirectory: dir)
        XCTAssertEqual(second.result.stdout, untraced.stdout, "the program's output changed")
    }

    /// A trace that knows nothing of fast calls (threshold over 0, muting off) adds nothing, and says so.
    func testTraceWithNothingMutedSaysItListsNothing() throws {
        let dir = Workspace.directory("exclude-nothing")
        let built = try build("hot_leaf.c", compiler: .gcc, name: "hot_leaf", in: dir)
        XCTAssertEqual(built.result.status, 0, built.result.description)
        let trace = dir.appendingPathComponent("off.trace")
        let recorded = try RecordCommand.run(["-t", "1ms", "--mute", "off", "-o", trace.path], [built.binary.path], in: dir)
        XCTAssertEqual(recorded.status, 0, recorded.description)
        let result = try excludeList([trace.path], in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }, [], result.stdout)
        XCTAssertTrue(result.stderr.contains("recorded at threshold 1ms with no function muted"), result.stderr)
    }

    func testBadArgumentsAreRefusedInOneLine() throws {
        try Workspace.requireProducts()
        let dir = Workspace.directory("exclude-args")
        let missing = dir.appendingPathComponent("missing.trace").path
        let cases: [(arguments: [String], says: String)] = [
            ([missing], "missing.trace"),
            ([missing, "--min-calls", "0"], "--min-calls 0 is not valid"),
            ([missing, "--max-cost", "0"], "--max-cost 0 is not valid"),
            ([missing, "--max-cost", "fast"], "--max-cost 'fast' is not valid"),
            ([missing, "--outliers", "101"], "--outliers 101.0 is not valid"),
        ]
        for (arguments, says) in cases {
            let result = try excludeList(arguments, in: dir)
            XCTAssertNotEqual(result.status, 0, "\(arguments):\n\(result)")
            XCTAssertTrue(result.stderr.contains(says), "\(arguments):\n\(result.stderr)")
            XCTAssertEqual(result.stdout, "", "\(arguments)")
        }
    }

    func testWrapperRefusesAnUnreadableListInOneLine() throws {
        for compiler in Compiler.allCases {
            let dir = Workspace.directory("exclude-wrapper-\(compiler)")
            let result = try build("hot_leaf.c", compiler: compiler, exclude: dir.appendingPathComponent("no-such-list"),
                                   name: "hot_leaf", in: dir)
            XCTAssertEqual(result.result.status, 1, "\(compiler):\n\(result.result)")
            XCTAssertTrue(result.result.stderr.hasPrefix("calltrace-cc: error: CALLTRACE_EXCLUDE="), result.result.stderr)
            XCTAssertTrue(result.result.stderr.contains("no-such-list is not a readable file"), result.result.stderr)
            XCTAssertEqual(result.result.stderr.filter { $0 == "\n" }.count, 1, "one line:\n\(result.result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: result.binary.path))
        }
    }

    /// With sleds (the default) both compilers leave the listed functions out: gcc's plugin as gcc's
    /// -finstrument-functions-exclude-function-list would (a name containing an entry), clang's
    /// -fxray-never-instrument with the list the wrapper makes of it (a C name; a qualified C++
    /// name as the fragment of the mangled name it makes).
    func testSledBuildsLeaveTheListedFunctionsOut() throws {
        for compiler in [Compiler.gcc, .clang] {
            let dir = Workspace.directory("exclude-sleds-\(compiler)")
            let list = dir.appendingPathComponent("exclude.txt")
            try "# a list\nhot_step  # 20000 calls\ncalc::Acc::step\n".write(to: list, atomically: true, encoding: .utf8)
            let built = try build("hot_leaf.c", compiler: compiler, exclude: list, name: "hot_leaf", in: dir)
            XCTAssertEqual(built.result.status, 0, built.result.description)
            XCTAssertEqual(built.result.stderr, "", "\(compiler): no warning")
            let recorded = try record(built.binary, in: dir)
            XCTAssertEqual(recorded.trace.calls(named: "hot_step").count, 0, "\(compiler):\n\(recorded.trace.tree)")
            XCTAssertEqual(recorded.trace.calls(named: "now_and_then").count, 20_000, "\(compiler)")
            let methods = try build("hot_methods.cpp", compiler: compiler, cxx: true, exclude: list,
                                    name: "hot_methods", in: dir)
            XCTAssertEqual(methods.result.status, 0, methods.result.description)
            let second = try record(methods.binary, in: dir)
            XCTAssertFalse(second.trace.calls.contains { $0.name.contains("Acc::step") }, "\(compiler):\n\(second.trace.tree)")
            XCTAssertEqual(second.trace.calls.filter { $0.name.contains("calc::twice") }.count, 20_000, "\(compiler)")
        }
    }

    func testClangHooksBuildWarnsOnceAndKeepsEveryHook() throws {
        let dir = Workspace.directory("exclude-clang")
        let list = dir.appendingPathComponent("exclude.txt")
        try "# a list\nhot_step  # 20000 calls\n".write(to: list, atomically: true, encoding: .utf8)
        let built = try build("hot_leaf.c", compiler: .clangHooks, exclude: list, name: "hot_leaf", in: dir)
        XCTAssertEqual(built.result.status, 0, built.result.description)
        XCTAssertTrue(built.result.stderr.hasPrefix("calltrace-cc: warning: CALLTRACE_EXCLUDE is ignored: clang's hooks"),
                      built.result.stderr)
        XCTAssertEqual(built.result.stderr.filter { $0 == "\n" }.count, 1, "one line:\n\(built.result.stderr)")
        let recorded = try record(built.binary, in: dir)
        XCTAssertEqual(recorded.trace.calls(named: "hot_step").count, 20_000, "clang keeps the hooks")
    }
}
