import CalltraceKit
import Foundation
import XCTest

/// Sleds (docs/design.md, "Sleds"): patched in only when a setting asks for a trace, out again
/// when their function is muted, and leaving the program's registers, vector state, tail calls and
/// threads as they were. Fixtures: Fixtures/sleds.c, Fixtures/mute.c.
final class SledTests: XCTestCase {
    private static let sledBuilds: [Compiler] = [.gcc, .clang]

    private func build(_ compiler: Compiler, flags: [String] = ["-O2", "-g", "-pthread"], name: String = "sleds")
        throws -> Fixture {
        try Fixture.build(["sleds.c"], compiler: compiler, flags: flags, name: name)
    }

    /// Without a setting the sleds stay as the compiler left them: probe() begins with the jump over
    /// its entry sled; with one they are patched in before main runs (a jump over the id to the call of the stub).
    func testNothingIsPatchedWithoutASetting() throws {
        for compiler in Self.sledBuilds {
            let fixture = try build(compiler)
            let untraced = try fixture.runUntraced(["bytes"])
            XCTAssertEqual(untraced.stdout, "eb09 7\n", "\(compiler): \(untraced)")
            let (traced, _) = try fixture.run(["bytes"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertTrue(traced.stdout.hasPrefix("eb03") && traced.stdout.hasSuffix(" 7\n"), "\(compiler): \(traced)")
        }
    }

    /// A module registered with another sled ABI (built by an older calltrace's wrapper) is not
    /// patched: the runtime warns once, naming it and the way out, and the program runs as it would.
    func testAModuleWithAnotherSledABIIsNamedNotSilentlyUntraced() throws {
        let sleds = Workspace.packageRoot.appendingPathComponent("CShims/sleds").path
        let fixture = try Fixture.build(["sled_abi.c"], compiler: .gcc, flags: ["-O2", "-I", sleds], name: "sled_abi")
        let (traced, _) = try fixture.run([], environment: ["CALLTRACE_THRESHOLD": "10ms"], traceName: "sled_abi")
        XCTAssertEqual(traced.status, 0, "\(traced)")
        XCTAssertEqual(traced.stdout, "ran\n")
        XCTAssertTrue(traced.stderr.contains("was built with sleds of another calltrace (sled ABI 1; this runtime's is 2)"),
                      traced.stderr)
        XCTAssertEqual(traced.stderr.components(separatedBy: "sled ABI").count - 1, 1, "once: \(traced.stderr)")
        let untraced = try fixture.runUntraced([])
        XCTAssertEqual(untraced.stderr, "", "no setting, no word")
    }

    /// The handlers' fast paths touch no vector register, and their slow paths save the vector and
    /// x87 state: calls that pass and return doubles, AVX vectors and long doubles compute what they
    /// compute untraced, at threshold 0 (every call's exit takes the slow path) and 10 ms.
    func testVectorAndX87ArgumentsSurviveTheSlowPaths() throws {
        for compiler in Self.sledBuilds {
            let fixture = try build(compiler)
            let untraced = try fixture.runUntraced(["vectors", "20000"])
            XCTAssertTrue(untraced.stdout.hasPrefix("vectors "), untraced.description)
            for threshold in ["0", "10ms"] {
                let (traced, _) = try fixture.run(["vectors", "20000"], environment: ["CALLTRACE_THRESHOLD": threshold],
                                                  traceName: "vectors\(threshold)")
                XCTAssertEqual(traced.stdout, untraced.stdout, "\(compiler) threshold \(threshold): \(traced)")
            }
        }
    }

    /// A caller that keeps values live across calls of leaves it knows (gcc's IPA-RA may keep them
    /// in registers those leaves leave alone, which a patched sled must leave alone too), at -O2
    /// and -O3.
    func testRegistersKeptAcrossCallsSurvive() throws {
        for compiler in Self.sledBuilds {
            for level in ["-O2", "-O3"] {
                let fixture = try build(compiler, flags: [level, "-g", "-pthread"], name: "sleds\(level)")
                let untraced = try fixture.runUntraced(["registers", "200000"])
                for threshold in ["0", "10ms"] {
                    let (traced, _) = try fixture.run(["registers", "200000"],
                                                      environment: ["CALLTRACE_THRESHOLD": threshold, "CALLTRACE_MUTE": "off"],
                                                      traceName: "registers\(threshold)")
                    XCTAssertEqual(traced.stdout, untraced.stdout, "\(compiler) \(level) threshold \(threshold): \(traced)")
                }
            }
        }
    }

    /// Tail calls (sibling calls on: -foptimize-sibling-calls after the wrapper's flags) nest as the
    /// source reads: a function that tail-calls an instrumented one is its caller in the tree and
    /// ends when it does, directly, through a pointer, and along a chain of three.
    func testTailCallsToInstrumentedFunctionsNestAsTheSourceReads() throws {
        for compiler in Self.sledBuilds {
            let fixture = try build(compiler, flags: ["-O2", "-g", "-pthread", "-foptimize-sibling-calls"], name: "sleds-tails")
            let (result, url) = try fixture.run(["tails"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.stdout, "tails 0\n", "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            let context = "\(compiler):\n\(trace.tree)"
            XCTAssertEqual(Array(trace.outline.prefix(8)),
                           ["main", "  direct_head", "    direct_tail", "  pointer_head", "    pointer_tail",
                            "  chain_a", "    chain_b", "      chain_c"], context)
            for name in ["direct_head", "direct_tail", "pointer_head", "pointer_tail", "chain_a", "chain_b", "chain_c"] {
                assertCost(trace.calls(named: name).first, atLeastMs: 12, below: 2000, in: trace)
            }
            XCTAssertFalse(trace.calls.contains { $0.unwound || $0.unfinished }, context)
        }
    }

    /// Threads the default settings do not record (CALLTRACE_THREADS=main's others) run a hot
    /// function only they call: it is muted for them, named as such in the trace, and the main
    /// thread's calls are as they would be. With hooks too (their sites patched out).
    func testAFunctionOnlyUnrecordedThreadsRunIsMuted() throws {
        for compiler in Compiler.allCases {
            let fixture = try build(compiler)
            let untraced = try fixture.runUntraced(["workers", "3000000"])
            let (result, url) = try fixture.run(["workers", "3000000"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.stdout, untraced.stdout, "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            let symbols = Symbolicator(modules: trace.trace.modules, warn: { _ in })
            let muted = trace.trace.muted.filter { symbols.symbolicate($0.function, atTick: $0.mutedTick).name == "hot" }
            let context = "\(compiler): muted \(trace.trace.muted)\n\(trace.tree)"
            XCTAssertEqual(muted.count, 1, context)
            XCTAssertTrue(muted.first?.unrecordedOnly ?? false, context)
            XCTAssertEqual(muted.first?.sleds, !compiler.hooks, context)
            XCTAssertEqual(trace.outline, ["main", "  slow_main"], context)
            assertCost(trace.calls(named: "slow_main").first, atLeastMs: 25, below: 2000, in: trace)
        }
    }

    /// A recursion whose outer call holds millions of fast inner calls (an interpreter's call path,
    /// a callback): the inner calls stop being timed, the outer one stays timed and recorded, and
    /// the inner calls' handlers are taken out of its cost (docs/design.md, "Adaptive muting").
    /// sleds.c inner: eval(3000000) calls eval(0) three million times; the same code without
    /// instrumentation is timed by the fixture.
    func testARecursionsInnerCallsStopBeingTimedAndItsOuterCallKeepsItsCost() throws {
        for compiler in Self.sledBuilds {
            let fixture = try build(compiler)
            let (result, url) = try fixture.run(["inner", "3000000"], environment: ["CALLTRACE_THRESHOLD": "2ms"])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let untracedMs = result.stderr.split(separator: "\n").first { $0.hasPrefix("untraced_ns ") }
                .flatMap { Double($0.dropFirst(12)) }.map { $0 / 1e6 }
            let recorded = try RecordedTrace(url)
            let symbols = Symbolicator(modules: recorded.trace.modules, warn: { _ in })
            let inside = recorded.trace.muted.filter { symbols.symbolicate($0.function, atTick: $0.mutedTick).name == "eval" }
            XCTAssertEqual(inside.map(\.insideLevel), [1], "\(compiler): eval's calls inside eval are not timed")
            let outer = recorded.calls(named: "eval")
            guard let untracedMs, outer.count == 1, let call = outer.first else {
                return XCTFail("\(compiler): one eval call recorded, and the untraced time; \(result.stderr)\n\(recorded.tree)")
            }
            let text = "\(compiler): eval untraced \(untracedMs) ms, measured \(call.cost.milliseconds), "
                + "reported \(call.reportedCost.milliseconds) ± \(call.uncertainty.milliseconds)"
            // The untimed calls' handlers are taken out (at their calibrated cost, well over a third
            // of a nanosecond each), and never more than the call measured.
            XCTAssertGreaterThanOrEqual((call.cost - call.reportedCost).milliseconds, 1, text)
            XCTAssertGreaterThanOrEqual(call.reportedCost.milliseconds + call.uncertainty.milliseconds, 0.5 * untracedMs, text)
            let info = try calltrace(["info", url.path])
            XCTAssertTrue(info.stdout.contains("eval: muted") && info.stdout.contains("only inside its own calls"), info.stdout)
        }
    }

    /// `calltrace record` traces a program built with sleds (the runtime it preloads is the one the
    /// program links).
    func testRecordTracesASledBuild() throws {
        for compiler in Self.sledBuilds {
            let fixture = try build(compiler)
            let trace = fixture.directory.appendingPathComponent("recorded.trace")
            try? FileManager.default.removeItem(at: trace)
            let result = try RecordCommand.run(["-o", trace.path], [fixture.binary.path, "tails"], in: fixture.directory)
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            XCTAssertEqual(result.stdout, "tails 0\n", "\(compiler)")
            let recorded = try RecordedTrace(trace)
            XCTAssertEqual(recorded.trace.header.instrument & TraceFormat.Instrument.sleds, TraceFormat.Instrument.sleds,
                           "\(compiler): the trace says sleds timed it")
            XCTAssertEqual(recorded.calls(named: "chain_c").count, 1, "\(compiler):\n\(recorded.tree)")
            let info = try calltrace(["info", trace.path])
            XCTAssertTrue(info.stdout.contains("instrumented: sleds ("), info.stdout)
        }
    }

    /// A hot, tiny function muted with sleds costs what it costs uninstrumented (but for a jump):
    /// mute.c's loop of 10 M calls of four tiny functions, timed by the fixture itself, traced
    /// against a build without any instrumentation (the least of three runs each; a loose bound).
    /// The calls before the mute (the drain thread's next pass, late on a busy machine) are timed:
    /// a long loop keeps them a small part of it.
    func testAMutedFunctionCostsAboutWhatItCostsUninstrumented() throws {
        for compiler in Self.sledBuilds {
            let plainDirectory = Workspace.directory("sled-plain-\(compiler.rawValue)")
            let plainBinary = plainDirectory.appendingPathComponent("mute-plain")
            let built = try Command.run(try which(compiler.cc), ["-O2", Workspace.fixtures.appendingPathComponent("mute.c").path,
                                                                 "-o", plainBinary.path, "-lpthread"])
            XCTAssertEqual(built.status, 0, built.description)
            let fixture = try Fixture.build(["mute.c"], compiler: compiler, name: "sled-mute")
            func loopMs(_ stderr: String) -> Double? {
                stderr.split(separator: "\n").first { $0.hasPrefix("loop_ns ") }.flatMap { Double($0.dropFirst(8)) }.map { $0 / 1e6 }
            }
            var plain = Double.infinity, traced = Double.infinity
            for run in 0..<3 {
                let untraced = try Command.run(plainBinary.path, ["hot", "10000000"])
                plain = min(plain, loopMs(untraced.stderr) ?? .infinity)
                let (result, _) = try fixture.run(["hot", "10000000"], traceName: "run\(run)")
                traced = min(traced, loopMs(result.stderr) ?? .infinity)
            }
            XCTAssertLessThan(traced, plain * 1.5 + 15, "\(compiler): loop \(traced) ms traced, \(plain) ms uninstrumented")
        }
    }

    /// The sleds' handlers must leave every register as they found it: they are built to touch no
    /// vector or x87 register, and every function they reach but through the slow paths' thunk
    /// (which saves the vector state) must do the same and call nothing outside the runtime (libc's
    /// memcpy uses vector registers). clang checks none of it for them, so the test reads the
    /// built runtime: the call graph from the handlers, direct calls and jumps only (a part the
    /// optimiser split off, `exit_near.cold.1`, is a function like any other).
    func testHandlersTouchNoVectorRegisterAndCallOnlyTheThunk() throws {
        try Workspace.requireProducts()
        let disassembly = try Command.run(try which("objdump"), ["-d", "--no-show-raw-insn", Workspace.runtimeLibrary.path])
        XCTAssertEqual(disassembly.status, 0, disassembly.description)
        var bodies: [String: [Substring]] = [:]
        var current: String?
        for line in disassembly.stdout.split(separator: "\n") {
            if line.hasSuffix(">:"), let open = line.firstIndex(of: "<") {
                current = String(line[line.index(after: open)..<line.index(line.endIndex, offsetBy: -2)])
                bodies[current!] = []
            } else if let name = current {
                bodies[name, default: []].append(line)
            }
        }
        let thunk = "ct_sled_vsave_call"
        var reached: Set<String> = []
        var pending = ["ct_sled_enter", "ct_sled_exit", "ct_sled_tail"]
        while let function = pending.popLast() {
            guard !reached.contains(function) else { continue }
            guard let body = bodies[function] else { return XCTFail("\(function) not found in \(Workspace.runtimeLibrary.path)") }
            reached.insert(function)
            for line in body {
                XCTAssertFalse(["%xmm", "%ymm", "%zmm", "%k0", "%k1", "%st", "%mm"].contains { line.contains($0) }, "\(function): \(line)")
                guard line.contains("\tcall") || line.contains("\tjmp") else { continue }
                XCTAssertFalse(line.contains("*"), "\(function) calls through a pointer: \(line)")
                guard let open = line.firstIndex(of: "<"), let close = line.lastIndex(of: ">") else { continue }
                let target = line[line.index(after: open)..<close].split(separator: "+")[0]
                XCTAssertFalse(target.hasSuffix("@plt"), "\(function) calls outside the runtime: \(line)")
                if target != thunk && target != function && !target.hasSuffix("@plt") { pending.append(String(target)) }
            }
        }
        XCTAssertTrue(reached.contains("ct_sled_exit") && reached.count >= 3, "\(reached)")
    }
}
