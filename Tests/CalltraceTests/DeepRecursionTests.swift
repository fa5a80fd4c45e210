import CalltraceKit
import Foundation
import XCTest

/// Recursion deeper than the runtime's stack (4096 frames): the kept part is recorded and depth
/// never drifts, also when a longjmp lands beyond or within it.
final class DeepRecursionTests: XCTestCase {
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
}
