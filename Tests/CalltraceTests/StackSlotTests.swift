import CalltraceKit
import Foundation
import XCTest

/// The runtime finds each call's return-address slot on the stack to tell a normal return from a
/// frame left by longjmp or unwinding: functions with big frames that return normally must never be
/// flagged `(unwound)`.
final class StackSlotTests: XCTestCase {
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

    /// gcc -O2: big() has a 24 KiB uninitialised array holding stale copies of its return address
    /// left by deeper big() calls from the same call site. Finding the return slot by scanning up
    /// from the stack pointer stopped at such a copy; the inlined helper after the array was filled
    /// found the real slot, higher, and closed big() as unwound with its later children moved up.
    func testStaleReturnAddressesInABigFrameDoNotCloseTheCall() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["staleslot.c"], compiler: compiler)
            for threshold in ["0", "1ms"] {
                let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": threshold], timeout: 60)
                let label = "\(compiler) threshold \(threshold)"
                XCTAssertEqual(result.status, 0, "\(label): \(result)")
                XCTAssertEqual(result.stdout, "staleslot: 117\n", label)
                let shape = try TraceShape(url)
                let context = "\(label):\n\(shape.head(100))"
                XCTAssertEqual(shape.calls.filter(\.unwound).map(\.name), [], "calls that returned flagged unwound; \(context)")
                if threshold == "0" {
                    XCTAssertTrue(shape.nestingErrors.isEmpty, "\(shape.explain(shape.nestingErrors))\n\(context)")
                }
                let bigs = shape.calls.indices.filter { shape.calls[$0].name == "big" }
                XCTAssertEqual(bigs.count, 9, context)
                for big in bigs {
                    XCTAssertEqual(shape.parent(of: big)?.name, "caller", "big is not under its caller; \(context)")
                    guard threshold == "0" else { continue }
                    let children = shape.calls.indices.filter { shape.calls[$0].parent == big }.map { shape.calls[$0].name }
                    // gcc's hooks instrument the inlined helper; clang's and sleds come after
                    // inlining, so none.
                    if compiler.instrumentsInlinedCalls || !children.isEmpty {
                        XCTAssertEqual(children, ["helper", "helper"], "big's children; \(context)")
                    }
                }
                // caller(8) ... caller(0), each under the one before.
                XCTAssertEqual(shape.calls(named: "caller").map(\.depth), Array(1...9), context)
            }
        }
    }
}
