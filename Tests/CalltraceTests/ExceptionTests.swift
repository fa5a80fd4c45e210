import CalltraceKit
import Foundation
import XCTest

/// C++ exceptions: frames skipped by a throw are closed at the throw, calls after a catch nest
/// under the catcher, and depth never drifts.
final class ExceptionTests: XCTestCase {
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
                // g++'s hooks run their exits while unwinding; clang++'s and sleds do not, so the
                // runtime closes them.
                if !compiler.instrumentsInlinedCalls { XCTAssertTrue(level.unwound, context) }
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
}
