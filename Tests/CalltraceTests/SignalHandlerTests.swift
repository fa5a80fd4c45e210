import CalltraceKit
import Foundation
import XCTest

/// Signal handlers enter calls where a call stack does not expect them: they nest under the
/// interrupted call, and a siglongjmp out of one closes the interrupted frames.
final class SignalHandlerTests: XCTestCase {
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
                // Under tick, or beside it when the signal landed inside tick's enter hook after its
                // clock read and before its push (docs/design.md, Signals): tick then runs past it.
                if let tick = trace.calls(named: "tick").first {
                    XCTAssertTrue([tick.depth, tick.depth + 1].contains(handler.depth), context)
                }
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
}
