import CalltraceKit
import Foundation
import XCTest

/// Control flow that leaves frames without their exit hooks, or enters calls from places a call
/// stack does not expect: longjmp, siglongjmp, C++ exceptions, signal handlers, recursion deeper
/// than the runtime's stack, and an interpreter whose errors longjmp through its parser. Whatever
/// happens, depth must never drift: every fixture ends with a slow `final_step` from main, which
/// must be recorded at depth 1 under main.
final class ControlFlowTests: XCTestCase {
    // MARK: longjmp and siglongjmp

    func testLongjmpClosesSkippedFramesAtTheJump() throws {
        // -D_FORTIFY_SOURCE=2 turns longjmp into __longjmp_chk.
        for compiler in Compiler.allCases {
            for (flags, label) in [(["-O2", "-g"], "plain"), (["-O2", "-g", "-D_FORTIFY_SOURCE=2"], "fortify")] {
                let fixture = try Fixture.build(["longjmp.c"], compiler: compiler, flags: flags, name: "longjmp-\(label)")
                let (result, url) = try fixture.run(["once"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
                XCTAssertEqual(result.stdout, "longjmp: once 1\n", "\(compiler) \(label): \(result)")
                let trace = try RecordedTrace(url)
                let context = "\(compiler) \(label):\n\(trace.tree)"
                XCTAssertEqual(trace.outline, ["main", "  protected_call", "    level1", "      level2", "        level3",
                                               "  final_step"], context)
                XCTAssertEqual(trace.calls.filter(\.unwound).map(\.name), ["level1", "level2", "level3"], context)
                guard let pcall = trace.calls(named: "protected_call").first else { continue }
                XCTAssertFalse(pcall.unwound, context)
                for name in ["level1", "level2", "level3"] {
                    guard let level = trace.calls(named: name).first else { continue }
                    assertCost(level, atLeastMs: 12, below: 500, in: trace)
                    // protected_call worked 40 ms after the jump: none of it belongs to the skipped frames.
                    XCTAssertGreaterThanOrEqual((pcall.cost - level.cost).milliseconds, 39.9,
                                                "\(name) charged past the longjmp; \(context)")
                }
                assertCost(pcall, atLeastMs: 52, below: 800, in: trace)
                assertFinalStep(trace, mainAtLeastMs: 67, context: context)
            }
        }
    }

    func testLongjmpDoesNotDriftDepth() throws {
        try checkPcallLoop(mode: "pcall")
    }

    func testSiglongjmpDoesNotDriftDepth() throws {
        try checkPcallLoop(mode: "sigpcall")
    }

    /// 20,000 pcall(error) iterations, each raising from 1 to 6 frames deep, every call recorded.
    private func checkPcallLoop(mode: String) throws {
        let iterations = 20_000
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["longjmp.c"], compiler: compiler)
            let (result, url) = try fixture.run([mode, "\(iterations)"], environment: ["CALLTRACE_THRESHOLD": "0"])
            XCTAssertEqual(result.stdout, "longjmp: \(mode) \(iterations)\n", "\(compiler): \(result)")
            let shape = try TraceShape(url)
            let context = "\(compiler) \(mode):\n\(shape.censusText)"
            XCTAssertEqual(shape.trace.header.drops, 0, context)
            assertConsistentNesting(shape, context: context)
            // dive(i % 6) recurses i % 6 times: i % 6 + 1 dive frames, then raise_error.
            let dives = (0..<iterations).reduce(0) { $0 + $1 % 6 + 1 }
            XCTAssertEqual(shape.census["1 protected_call"], iterations, context)
            XCTAssertEqual(shape.census["1 ok_call"], iterations, context)
            XCTAssertEqual(shape.calls(named: "dive").count, dives, context)
            XCTAssertEqual(shape.calls(named: "raise_error").count, iterations, context)
            XCTAssertTrue(shape.calls(named: "dive").allSatisfy { $0.unwound && (2...7).contains($0.depth) }, context)
            XCTAssertTrue(shape.calls(named: "raise_error").allSatisfy { $0.unwound && (3...8).contains($0.depth) }, context)
            XCTAssertFalse(shape.calls(named: "protected_call").contains { $0.unwound }, context)
            assertFinalStep(shape, mainAtLeastMs: 15, context: context)
        }
    }

    func testLongjmpToMainsOwnLoopDoesNotDriftDepth() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["longjmp.c"], compiler: compiler)
            // 50,000 jumps with only slow calls recorded, then 10,000 with every call recorded.
            let (slow, slowURL) = try fixture.run(["mainloop", "50000"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(slow.stdout, "longjmp: mainloop 50000\n", "\(compiler): \(slow)")
            let trace = try RecordedTrace(slowURL)
            XCTAssertEqual(trace.outline, ["main", "  final_step"], "\(compiler):\n\(trace.tree)")
            assertCost(trace.calls(named: "final_step").first, atLeastMs: 15, below: 500, in: trace)

            let (all, allURL) = try fixture.run(["mainloop", "10000"], environment: ["CALLTRACE_THRESHOLD": "0"])
            XCTAssertEqual(all.status, 0, "\(compiler): \(all)")
            let shape = try TraceShape(allURL)
            let context = "\(compiler):\n\(shape.censusText)"
            assertConsistentNesting(shape, context: context)
            XCTAssertEqual(shape.census["1 dive (unwound)"], 10_000, context)
            XCTAssertEqual(shape.calls(named: "raise_error").count, 10_000, context)
            assertFinalStep(shape, mainAtLeastMs: 15, context: context)
        }
    }

    func testChainedLongjmpsChargeEachFrameUpToItsOwnJump() throws {
        // inner2 jumps to middle (after 12 ms), middle works 20 ms and jumps to outer, with no
        // instrumented call between the two jumps.
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["longjmp.c"], compiler: compiler)
            let (result, url) = try fixture.run(["chain"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.stdout, "longjmp: chain 1\n", "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            let context = "\(compiler):\n\(trace.tree)"
            XCTAssertEqual(trace.outline, ["main", "  outer", "    middle", "      inner1", "        inner2", "  final_step"],
                           context)
            guard let middle = trace.calls(named: "middle").first, let inner2 = trace.calls(named: "inner2").first,
                  let outer = trace.calls(named: "outer").first else { continue }
            XCTAssertTrue(middle.unwound && inner2.unwound, context)
            assertCost(inner2, atLeastMs: 12, below: 500, in: trace)
            assertCost(middle, atLeastMs: 32, below: 800, in: trace)
            XCTAssertGreaterThanOrEqual((middle.cost - inner2.cost).milliseconds, 19.9,
                                        "inner2 charged past the first longjmp; \(context)")
            XCTAssertGreaterThanOrEqual((outer.cost - middle.cost).milliseconds, 29.9,
                                        "middle charged past the second longjmp; \(context)")
            assertFinalStep(trace, mainAtLeastMs: 77, context: context)
        }
    }

    // MARK: C++ exceptions

    func testExceptionClosesSkippedFramesAtTheThrow() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["exceptions.cpp"], compiler: compiler, cxx: true)
            let (result, url) = try fixture.run(["once"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.stdout, "exceptions: once 1\n", "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            let context = "\(compiler):\n\(trace.tree)"
            XCTAssertEqual(trace.outline, ["main", "  guarded(bool)", "    level1(bool)", "      level2(bool)",
                                           "        level3()", "  final_step()"], context)
            guard let guarded = trace.calls(named: "guarded(bool)").first else { continue }
            XCTAssertFalse(guarded.unwound, context)
            for name in ["level1(bool)", "level2(bool)", "level3()"] {
                guard let level = trace.calls(named: name).first else { continue }
                assertCost(level, atLeastMs: 12, below: 500, in: trace)
                // guarded's catch block worked 40 ms after the throw.
                XCTAssertGreaterThanOrEqual((guarded.cost - level.cost).milliseconds, 39.9,
                                            "\(name) charged past the throw; \(context)")
                // g++ runs the exit hooks while unwinding; clang++ does not, so the runtime closes them.
                if compiler == .clang { XCTAssertTrue(level.unwound, context) }
            }
            assertFinalStep(trace, mainAtLeastMs: 67, context: context)
        }
    }

    func testExceptionsInALoopDoNotDriftDepth() throws {
        let iterations = 20_000
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["exceptions.cpp"], compiler: compiler, cxx: true)
            let (result, url) = try fixture.run(["loop", "\(iterations)"], environment: ["CALLTRACE_THRESHOLD": "0"])
            XCTAssertEqual(result.stdout, "exceptions: loop \(iterations)\n", "\(compiler): \(result)")
            let shape = try TraceShape(url)
            let context = "\(compiler):\n\(shape.censusText)"
            XCTAssertEqual(shape.trace.header.drops, 0, context)
            assertConsistentNesting(shape, context: context)
            let dives = (0..<iterations).reduce(0) { $0 + $1 % 6 + 1 }
            XCTAssertEqual(shape.calls(named: "guarded_dive(int)").count, iterations, context)
            XCTAssertTrue(shape.calls(named: "guarded_dive(int)").allSatisfy { $0.depth == 1 && !$0.unwound }, context)
            XCTAssertEqual(shape.census["1 ok_call(int)"], iterations, context)
            XCTAssertEqual(shape.calls(named: "dive(int, int)").count, dives, context)
            XCTAssertEqual(shape.calls(named: "thrower(int)").count, iterations, context)
            XCTAssertTrue(shape.calls(named: "thrower(int)").allSatisfy { (3...8).contains($0.depth) }, context)
            assertFinalStep(shape, mainAtLeastMs: 15, context: context)
        }
    }

    func testCallsAfterACatchNestUnderTheCatcher() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["exceptions.cpp"], compiler: compiler, cxx: true)
            let (result, url) = try fixture.run(["middle"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.stdout, "exceptions: middle 1\n", "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.outline, ["main", "  outer()", "    middle()", "      after_catch()", "    sibling()",
                                           "  final_step()"], "\(compiler):\n\(trace.tree)")
            XCTAssertEqual(trace.calls.map(\.depth), [0, 1, 2, 3, 2, 1], "\(compiler):\n\(trace.tree)")
            XCTAssertFalse(trace.calls.contains(where: \.unwound), "\(compiler):\n\(trace.tree)")
        }
    }

    func testRethrowChargesTheRethrowerUpToTheRethrow() throws {
        // leaf works 12 ms and throws; mid catches, works 20 ms and rethrows (`throw;`); top catches
        // and works 40 ms.
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["exceptions.cpp"], compiler: compiler, cxx: true)
            let (result, url) = try fixture.run(["rethrow"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.stdout, "exceptions: rethrow 1\n", "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            let context = "\(compiler):\n\(trace.tree)"
            XCTAssertEqual(trace.outline, ["main", "  top()", "    mid()", "      leaf()", "  final_step()"], context)
            guard let top = trace.calls(named: "top()").first, let mid = trace.calls(named: "mid()").first,
                  let leaf = trace.calls(named: "leaf()").first else { continue }
            assertCost(leaf, atLeastMs: 12, below: 500, in: trace)
            assertCost(mid, atLeastMs: 32, below: 800, in: trace)
            XCTAssertGreaterThanOrEqual((top.cost - mid.cost).milliseconds, 39.9, "mid charged past the rethrow; \(context)")
            assertFinalStep(trace, mainAtLeastMs: 87, context: context)
        }
    }

    func testDestructorsRunByUnwindingNestUnderTheirFrame() throws {
        // level3 works 12 ms and throws through level2, whose Guard's destructor works 11 ms; guarded
        // catches and works 40 ms.
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["exceptions.cpp"], compiler: compiler, cxx: true)
            let (result, url) = try fixture.run(["raii"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.stdout, "exceptions: raii 1\n", "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            let context = "\(compiler):\n\(trace.tree)"
            XCTAssertEqual(trace.outline, ["main", "  guarded(bool)", "    level1(bool)", "      level2(bool)",
                                           "        level3()", "        Guard::~Guard()", "  final_step()"], context)
            XCTAssertEqual(trace.calls(named: "Guard::~Guard()").first?.depth, 4, context)
            guard let guarded = trace.calls(named: "guarded(bool)").first else { continue }
            assertCost(trace.calls(named: "Guard::~Guard()").first, atLeastMs: 11, below: 500, in: trace)
            for name in ["level1(bool)", "level2(bool)"] {
                guard let level = trace.calls(named: name).first else { continue }
                assertCost(level, atLeastMs: 23, below: 800, in: trace)
                XCTAssertGreaterThanOrEqual((guarded.cost - level.cost).milliseconds, 39.9,
                                            "\(name) charged past the unwinding, into the catch block; \(context)")
            }
            assertFinalStep(trace, mainAtLeastMs: 78, context: context)
        }
    }

    // MARK: Signal handlers

    func testSignalStormKeepsNestingConsistent() throws {
        // SIGALRM every 50 us for 60 ms while busy_loop calls work() -> leaf(); the handler is
        // instrumented and calls handler_work().
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["signals.c"], compiler: compiler)
            for threshold in ["0", "10ms"] {
                let (result, url) = try fixture.run(["storm", "60"], environment: ["CALLTRACE_THRESHOLD": threshold])
                let context0 = "\(compiler) threshold \(threshold)"
                XCTAssertEqual(result.status, 0, "\(context0): \(result)")
                let fields = result.stdout.split(whereSeparator: \.isWhitespace)
                guard fields.count == 4, let signals = Int(fields[2]), let workCalls = Int(fields[3]) else {
                    XCTFail("\(context0): unexpected output \(result)")
                    continue
                }
                XCTAssertGreaterThan(signals, 100, "\(context0): the timer hardly fired")
                let shape = try TraceShape(url)
                let drops = Int(shape.trace.header.drops + shape.trace.header.nestedDrops)
                let context = "\(context0), \(signals) signals, \(drops) drops:\n\(shape.censusText)"
                XCTAssertTrue(shape.calls.allSatisfy { !$0.unwound && !$0.unfinished }, context)
                XCTAssertTrue(shape.orderErrors.isEmpty, "\(context)\n\(shape.explain(shape.orderErrors))")
                if threshold == "0" {
                    // A handler that interrupts a record write drops its own record (and counts it);
                    // a dropped on_alarm leaves its handler_work under the interrupted call.
                    let errors = shape.nestingErrors
                    XCTAssertLessThanOrEqual(errors.count, drops, "\(context)\n\(shape.explain(errors))")
                    XCTAssertTrue(errors.allSatisfy { shape.calls[$0].name == "handler_work" }, shape.explain(errors))
                    XCTAssertEqual(shape.calls(named: "work").count, workCalls, context)
                    XCTAssertEqual(shape.calls(named: "leaf").count, workCalls, context)
                    XCTAssertTrue(shape.calls(named: "work").allSatisfy { $0.depth == 2 }, context)
                    XCTAssertTrue(shape.calls(named: "leaf").allSatisfy { $0.depth == 3 }, context)
                    let handlers = shape.calls(named: "on_alarm")
                    XCTAssertLessThanOrEqual(handlers.count, signals, context)
                    XCTAssertGreaterThanOrEqual(handlers.count + drops, signals, context)
                    XCTAssertTrue(handlers.allSatisfy { (1...4).contains($0.depth) }, context)
                    for (i, call) in shape.calls.enumerated() where call.name == "on_alarm" {
                        let parent = shape.parent(of: i)?.name ?? "none"
                        XCTAssertTrue(["main", "busy_loop", "work", "leaf"].contains(parent), shape.path(to: i))
                    }
                    XCTAssertEqual(shape.calls.filter { $0.parent == nil }.map(\.name), ["main"], context)
                } else {
                    // A work() call the scheduler preempted for 10 ms (2 busy cores) is rightly
                    // recorded; it must still sit where it ran.
                    let outline = shape.calls.map { "\($0.depth) \($0.name)" }
                    XCTAssertEqual(outline.filter { !$0.hasSuffix(" work") && !$0.hasSuffix(" leaf") },
                                   ["0 main", "1 busy_loop", "1 final_step"], context)
                    XCTAssertTrue(shape.nestingErrors.isEmpty, "\(context)\n\(shape.explain(shape.nestingErrors))")
                    XCTAssertTrue(shape.calls(named: "work").allSatisfy { $0.depth == 2 }, context)
                }
                assertFinalStep(shape, mainAtLeastMs: 75, context: context)
            }
        }
    }

    func testSlowHandlerNestsUnderTheInterruptedCall() throws {
        // One SIGALRM 20 ms into long_task (60 ms); the handler calls slow_in_handler (15 ms).
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["signals.c"], compiler: compiler)
            for mode in ["slow", "slowbusy"] {
                let (result, url) = try fixture.run([mode], environment: ["CALLTRACE_THRESHOLD": "10ms"])
                XCTAssertEqual(result.stdout, "signals: \(mode) 1\n", "\(compiler) \(mode): \(result)")
                let trace = try RecordedTrace(url)
                let context = "\(compiler) \(mode):\n\(trace.tree)"
                // In slowbusy the signal may land in tick(), itself recorded when the handler made it slow.
                let outline = trace.outline.filter { !$0.hasSuffix("tick") }
                XCTAssertEqual(outline.map { $0.trimmingCharacters(in: .whitespaces) },
                               ["main", "long_task", "on_alarm", "slow_in_handler", "final_step"], context)
                guard let task = trace.calls(named: "long_task").first, let handler = trace.calls(named: "on_alarm").first,
                      let slow = trace.calls(named: "slow_in_handler").first else { continue }
                XCTAssertEqual(task.depth, 1, context)
                XCTAssertTrue((2...3).contains(handler.depth), context)
                XCTAssertEqual(slow.depth, handler.depth + 1, context)
                if let tick = trace.calls(named: "tick").first { XCTAssertEqual(handler.depth, tick.depth + 1, context) }
                assertCost(slow, atLeastMs: 15, below: 500, in: trace)
                assertCost(handler, atLeastMs: 15, below: 500, in: trace)
                assertCost(task, atLeastMs: mode == "slow" ? 75 : 60, below: 1000, in: trace)
                XCTAssertFalse(trace.calls.contains { $0.unwound || $0.unfinished }, context)
                assertFinalStep(trace, mainAtLeastMs: 75, context: context)
            }
        }
    }

    func testSiglongjmpOutOfAHandlerClosesTheInterruptedFrames() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["signals.c"], compiler: compiler)
            // Once: a 30 ms timeout interrupts compute -> crunch; guarded works 20 ms after the jump.
            let (once, onceURL) = try fixture.run(["timeout"], environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(once.stdout, "signals: timeout 1\n", "\(compiler): \(once)")
            let trace = try RecordedTrace(onceURL)
            let context = "\(compiler):\n\(trace.tree)"
            // A step() the scheduler preempted for 10 ms (a busy machine) is rightly recorded, under crunch.
            XCTAssertEqual(trace.outline.filter { $0 != "        step" },
                           ["main", "  guarded", "    compute", "      crunch", "  final_step"], context)
            if let guarded = trace.calls(named: "guarded").first, let compute = trace.calls(named: "compute").first {
                XCTAssertFalse(guarded.unwound, context)
                XCTAssertTrue(compute.unwound, context)
                assertCost(compute, atLeastMs: 30, below: 800, in: trace)
                XCTAssertGreaterThanOrEqual((guarded.cost - compute.cost).milliseconds, 19.9,
                                            "compute charged past the siglongjmp; \(context)")
            }
            assertFinalStep(trace, mainAtLeastMs: 65, context: context)

            // 300 timeouts of 300 us, every call recorded.
            let (many, manyURL) = try fixture.run(["timeouts", "300"], environment: ["CALLTRACE_THRESHOLD": "0"])
            XCTAssertEqual(many.stdout, "signals: timeouts 300\n", "\(compiler): \(many)")
            let shape = try TraceShape(manyURL)
            let drops = Int(shape.trace.header.drops + shape.trace.header.nestedDrops)
            let manyContext = "\(compiler), \(drops) drops:\n\(shape.censusText)"
            let errors = shape.nestingErrors
            XCTAssertLessThanOrEqual(errors.count, drops, "\(manyContext)\n\(shape.explain(errors))")
            XCTAssertTrue(shape.orderErrors.isEmpty, "\(manyContext)\n\(shape.explain(shape.orderErrors))")
            XCTAssertEqual(shape.census["1 guarded"], 300, manyContext)
            // A busy machine may hold the program up for the 300 us between arming the timer and
            // calling compute(): the handler then runs right under guarded, and rightly so.
            let early = shape.census["2 on_timeout (unwound)"] ?? 0
            XCTAssertLessThan(early, 30, manyContext)
            XCTAssertEqual((shape.census["2 compute (unwound)"] ?? 0) + early, 300, manyContext)
            XCTAssertEqual(shape.census["3 crunch (unwound)"], shape.census["2 compute (unwound)"], manyContext)
            XCTAssertEqual(shape.calls(named: "on_timeout").count + drops, 300, manyContext)
            XCTAssertTrue(shape.calls(named: "on_timeout").allSatisfy { $0.unwound && [2, 4, 5].contains($0.depth) },
                          manyContext)
            XCTAssertTrue(shape.calls(named: "step").allSatisfy { $0.depth == 4 }, manyContext)
            assertFinalStep(shape, mainAtLeastMs: 15, context: manyContext)
        }
    }

    // MARK: Recursion deeper than the runtime's stack

    func testRecursionBeyondCapacityDoesNotDriftDepth() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["deep.c"], compiler: compiler)
            let (result, url) = try runWithBigStack(fixture, ["return", "200000"])
            XCTAssertEqual(result.stdout, "deep: return 200000\n", "\(compiler): \(result)")
            let shape = try TraceShape(url)
            let context = "\(compiler):\n\(shape.head())"
            assertKeptDescent(shape, from: 1, unwoundFrom: nil, context: context)
            assertFinalStep(shape, mainAtLeastMs: 30, context: context)
        }
    }

    func testLongjmpFromBeyondCapacityToShallow() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["deep.c"], compiler: compiler)
            let (result, url) = try runWithBigStack(fixture, ["jump", "200000"])
            XCTAssertEqual(result.stdout, "deep: jump 200000\n", "\(compiler): \(result)")
            let shape = try TraceShape(url)
            let context = "\(compiler):\n\(shape.head())"
            XCTAssertEqual(shape.calls(named: "protected_call").map(\.depth), [1], context)
            XCTAssertFalse(shape.calls(named: "protected_call").first?.unwound ?? true, context)
            assertKeptDescent(shape, from: 2, unwoundFrom: 2, context: context)
            // protected_call worked 20 ms after the jump; the skipped frames end at the jump.
            if let pcall = shape.calls(named: "protected_call").first,
               let top = shape.calls(named: "descend").first {
                XCTAssertGreaterThanOrEqual((pcall.cost - top.cost).milliseconds, 19.9, context)
            }
            assertFinalStep(shape, mainAtLeastMs: 50, context: context)
        }
    }

    func testLongjmpWithinRecursionBeyondCapacity() throws {
        // descend(0), 200,000 deep, jumps to the descend at depth M, which works 20 ms and returns.
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["deep.c"], compiler: compiler)
            for landing in [100, 4095, 10_000] {
                let (result, url) = try runWithBigStack(fixture, ["jumpmid", "200000", "\(landing)"])
                XCTAssertEqual(result.stdout, "deep: jumpmid 200000\n", "\(compiler) \(landing): \(result)")
                let shape = try TraceShape(url)
                let descents = shape.calls(named: "descend")
                let kept = descents.filter { $0.depth >= 4090 }.map(\.description).joined(separator: "\n")
                let context = "\(compiler), landing at depth \(landing):\n\(shape.head(5))\n...\n\(kept)"
                // Frames deeper than the landing frame were skipped; the others returned.
                assertKeptDescent(shape, from: 1, unwoundFrom: landing < 4095 ? landing + 1 : nil, context: context)
                // Every descend at or above the landing frame was open during the 20 ms after the jump
                // and returned right after its callee: it costs hardly more than the callee.
                let live = descents.filter { $0.depth <= landing }
                for (parent, child) in zip(live, live.dropFirst()) where (parent.cost - child.cost).milliseconds >= 10 {
                    XCTFail("\(child) ends long before its parent \(parent); \(context)")
                    break
                }
                if let deepest = live.last, let skipped = descents.first(where: { $0.depth == landing + 1 }) {
                    XCTAssertGreaterThanOrEqual((deepest.cost - skipped.cost).milliseconds, 19.9, context)
                }
                assertFinalStep(shape, mainAtLeastMs: 50, context: context)
            }
        }
    }

    /// Runs deep.c with a 1 GB stack limit (the fixture checks it got enough).
    private func runWithBigStack(_ fixture: Fixture, _ arguments: [String]) throws -> (result: CommandResult, trace: URL) {
        let trace = fixture.directory.appendingPathComponent("deep-\(arguments.joined(separator: "-")).trace")
        try? FileManager.default.removeItem(at: trace)
        let script = "ulimit -s 1048576 2>/dev/null || ulimit -s \"$(ulimit -H -s)\"; exec \"$0\" \"$@\""
        let result = try Command.run("/bin/sh", ["-c", script, fixture.binary.path] + arguments,
                                     environment: ["CALLTRACE_OUTPUT": trace.path, "CALLTRACE_THRESHOLD": "10ms"],
                                     currentDirectory: fixture.directory)
        return (result, trace)
    }

    /// The descend chain deep.c records with the default capacity of 4096: one call at each depth
    /// `from`...4095 (the kept part of the stack), each the parent of the next; those at depth
    /// `unwoundFrom` and deeper unwound, the others returned.
    private func assertKeptDescent(_ shape: TraceShape, from first: Int, unwoundFrom: Int?, context: String,
                                   file: StaticString = #filePath, line: UInt = #line) {
        let descents = shape.calls(named: "descend")
        XCTAssertEqual(descents.map(\.depth), Array(first...4095), "descend depths; \(context)", file: file, line: line)
        XCTAssertTrue(shape.nestingErrors.isEmpty, "\(context)\n\(shape.explain(shape.nestingErrors))", file: file, line: line)
        let wrong = descents.filter { call in call.unwound != (unwoundFrom.map { call.depth >= $0 } ?? false) }
        XCTAssertTrue(wrong.isEmpty, "wrongly flagged: \(wrong.prefix(5)); \(context)", file: file, line: line)
        XCTAssertEqual(shape.calls(named: "shallow").count, 0, "shallow() is not slow; \(context)", file: file, line: line)
    }

    // MARK: An interpreter built by its own Makefile

    func testInterpreterErrorsUnwindThroughTheParser() throws {
        let make = try which("make")
        let workload = Workspace.fixtures.appendingPathComponent("interp/workload.calc").path
        for compiler in Compiler.allCases {
            let plain = try buildCalc(make: make, compiler: compiler, instrumented: false)
            let traced = try buildCalc(make: make, compiler: compiler, instrumented: true)
            let expected = try Command.run(plain.path, [workload])
            XCTAssertEqual(expected.status, 1, "\(compiler): the workload has failing lines: \(expected)")
            XCTAssertTrue(expected.stdout.contains("27: repeat 3000: 3000 errors, last: division by zero\n"), expected.stdout)

            let trace = traced.deletingLastPathComponent().appendingPathComponent("calc.trace")
            let result = try Command.run(traced.path, [workload],
                                         environment: ["CALLTRACE_OUTPUT": trace.path, "CALLTRACE_THRESHOLD": "0"])
            XCTAssertEqual(result.status, expected.status, "\(compiler): \(result)")
            XCTAssertEqual(result.stdout, expected.stdout, "\(compiler): traced output differs")
            XCTAssertEqual(result.stderr, "", "\(compiler)")

            let shape = try TraceShape(trace)
            let context = "\(compiler):\n\(shape.censusText.split(separator: "\n").prefix(60).joined(separator: "\n"))"
            XCTAssertEqual(shape.trace.header.drops, 0, context)
            XCTAssertTrue(shape.trace.header.closedCleanly, context)
            assertConsistentNesting(shape, context: context)
            // The deepest path: main, run_script, run_line, run_repeat, protected_run, parse_statement
            // (depth 5); 39 parenthesis levels of 4 parser frames (parse_expr, parse_term, parse_unary,
            // parse_primary); parse_call, call_builtin, 21 frames of fib(-1) ... fib(-21), calc_error.
            // gcc instruments the static functions it inlines; clang (after inlining) does not.
            let maxDepth = shape.calls.map(\.depth).max() ?? 0
            XCTAssertLessThanOrEqual(maxDepth, 5 + 4 * 40 + 2 + 21 + 1, context)
            XCTAssertGreaterThanOrEqual(maxDepth, 80, "the deep lines were recorded; \(context)")
            // 15 failing lines and 6,600 failing repeats: each error left calc_error by a longjmp.
            let errors = shape.calls(named: "calc_error")
            XCTAssertEqual(errors.count, 6615, context)
            XCTAssertTrue(errors.allSatisfy(\.unwound), context)
            XCTAssertTrue(shape.calls(named: "protected_run").allSatisfy { !$0.unwound && (3...4).contains($0.depth) },
                          context)
            XCTAssertEqual(shape.calls(named: "run_line").count, 35, context)
            XCTAssertTrue(shape.calls(named: "run_line").allSatisfy { $0.depth == 2 && !$0.unwound }, context)
            XCTAssertEqual(shape.calls.filter { $0.parent == nil }.map(\.name), ["main"], context)
            let last = shape.exitOrder.suffix(3)
            XCTAssertEqual(last.map(\.name), ["run_line", "run_script", "main"], "\(last)")
            XCTAssertTrue(last.allSatisfy { $0.depth <= 2 }, "\(last)")
        }
    }

    /// Builds Fixtures/interp with its Makefile into a temporary directory: through
    /// Scripts/calltrace-cc, or with the plain compiler and no instrumentation.
    private func buildCalc(make: String, compiler: Compiler, instrumented: Bool) throws -> URL {
        try Workspace.requireProducts()
        let out = Workspace.directory("calc-\(compiler.rawValue)-\(instrumented ? "traced" : "plain")")
        let cc = instrumented ? Workspace.compilerWrapper.path : try which(compiler.rawValue)
        let result = try Command.run(make, ["-C", Workspace.fixtures.appendingPathComponent("interp").path,
                                            "O=\(out.path)", "CC=\(cc)"],
                                     environment: ["CALLTRACE_CC": compiler.rawValue,
                                                   "CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path])
        guard result.status == 0 else {
            XCTFail("make with \(compiler) failed:\n\(result)")
            throw XCTSkip("calc did not build")
        }
        return out.appendingPathComponent("calc")
    }

    // MARK: Shared checks

    /// Every call sits exactly one level under its parent, and main is the only root.
    private func assertConsistentNesting(_ shape: TraceShape, context: String,
                                         file: StaticString = #filePath, line: UInt = #line) {
        let errors = shape.nestingErrors
        XCTAssertTrue(errors.isEmpty, "\(errors.count) calls not one level under their parent:\n"
                      + "\(shape.explain(errors))\n\(context)", file: file, line: line)
        let roots = shape.calls.filter { $0.parent == nil }.map(\.name)
        XCTAssertEqual(roots, ["main"], context, file: file, line: line)
    }

    /// Depth did not drift: the last call, final_step (15 ms), is at depth 1 under main, and main is
    /// the root at depth 0 with its whole cost.
    private func assertFinalStep(_ trace: RecordedTrace, mainAtLeastMs: Double, context: String,
                                 file: StaticString = #filePath, line: UInt = #line) {
        let finalName = trace.calls.contains { $0.name == "final_step()" } ? "final_step()" : "final_step"
        XCTAssertEqual(trace.calls.last?.name, finalName, context, file: file, line: line)
        XCTAssertEqual(trace.calls.last?.depth, 1, context, file: file, line: line)
        XCTAssertEqual(trace.outline.last, "  " + finalName, context, file: file, line: line)
        assertCost(trace.calls.last, atLeastMs: 15, below: 500, in: trace, file: file, line: line)
        XCTAssertEqual(trace.calls.first?.name, "main", context, file: file, line: line)
        XCTAssertEqual(trace.calls.first?.depth, 0, context, file: file, line: line)
        assertCost(trace.calls.first, atLeastMs: mainAtLeastMs, below: mainAtLeastMs + 1500, in: trace, file: file, line: line)
        XCTAssertFalse(trace.calls.first?.unwound ?? true, context, file: file, line: line)
        XCTAssertFalse(trace.calls.first?.unfinished ?? true, context, file: file, line: line)
    }

    private func assertFinalStep(_ shape: TraceShape, mainAtLeastMs: Double, context: String,
                                 file: StaticString = #filePath, line: UInt = #line) {
        guard let last = shape.calls.indices.last, let main = shape.calls.first else {
            XCTFail("empty trace; \(context)", file: file, line: line)
            return
        }
        let final = shape.calls[last]
        XCTAssertTrue(final.name.hasPrefix("final_step"), "last call \(final); \(context)", file: file, line: line)
        XCTAssertEqual(final.depth, 1, "\(shape.path(to: last))\n\(context)", file: file, line: line)
        XCTAssertEqual(shape.calls[last].parent, 0, "\(shape.path(to: last))\n\(context)", file: file, line: line)
        XCTAssertGreaterThanOrEqual(final.cost.milliseconds, 15, "\(final)", file: file, line: line)
        XCTAssertLessThan(final.cost.milliseconds, 500, "\(final)", file: file, line: line)
        XCTAssertEqual(main.name, "main", context, file: file, line: line)
        XCTAssertEqual(main.depth, 0, context, file: file, line: line)
        XCTAssertFalse(main.unwound || main.unfinished, "\(main)", file: file, line: line)
        XCTAssertGreaterThanOrEqual(main.cost.milliseconds, mainAtLeastMs, "\(main)", file: file, line: line)
        XCTAssertLessThan(main.cost.milliseconds, mainAtLeastMs + 3000, "\(main)", file: file, line: line)
    }

    // MARK: Big frames

    func testBigFramesThatReturnNormallyAreNotFlaggedUnwound() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["bigframe.c"], compiler: compiler)
            let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
            XCTAssertEqual(result.stdout, "1\n", "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            XCTAssertEqual(trace.outline, ["main", "  big_frame", "  huge_frame"], "\(compiler):\n\(trace.tree)")
            XCTAssertTrue(trace.calls.allSatisfy { !$0.unwound && !$0.unfinished }, "\(compiler):\n\(trace.tree)")
        }
    }
}
