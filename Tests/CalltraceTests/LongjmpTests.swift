import CalltraceKit
import Foundation
import XCTest

/// longjmp and siglongjmp leave frames without their exit hooks: the skipped frames are closed
/// (unwound) at the jump, and depth never drifts. Every fixture ends with a slow `final_step` from
/// main, which must be recorded at depth 1 under main.
final class LongjmpTests: XCTestCase {
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
            // A dive the scheduler held up past the threshold (a busy machine) is a slow call and
            // is recorded, unwound, at the depth its nesting gives it; nothing else may appear.
            let dives = trace.calls(named: "dive")
            XCTAssertTrue(dives.allSatisfy { $0.unwound && (1...6).contains($0.treeDepth) }, "\(compiler):\n\(trace.tree)")
            XCTAssertEqual(trace.outline.filter { !$0.hasSuffix(" dive") }, ["main", "  final_step"],
                           "\(compiler):\n\(trace.tree)")
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
}
