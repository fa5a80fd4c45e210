import CalltraceKit
import Foundation
import XCTest

/// The moment of muting (docs/design.md, "The moment of muting"): a function is muted while a call
/// of it is open or just starting on another thread, and no call is lost to it. Fixture:
/// Fixtures/mute_moment.c, whose main thread makes `victim` hot until the runtime mutes it and
/// waits 200 ms more (long enough for the runtime to take victim's exits out), while a second
/// recording thread is somewhere in a call of victim; all four builds.
final class MuteMomentTests: XCTestCase {
    private func run(_ mode: String, _ compiler: Compiler, file: StaticString = #filePath, line: UInt = #line)
        throws -> (trace: RecordedTrace, url: URL, context: String) {
        let fixture = try Fixture.build(["mute_moment.c"], compiler: compiler, file: file, line: line)
        let untraced = try fixture.runUntraced([mode])
        let (result, url) = try fixture.run([mode], environment: ["CALLTRACE_THRESHOLD": "10ms", "CALLTRACE_THREADS": "all"],
                                            traceName: mode)
        // 3: victim was never muted; 4: the entry handler never reached pthread_setspecific.
        XCTAssertEqual(result.status, 0, "\(compiler) \(mode): \(result)", file: file, line: line)
        XCTAssertEqual(result.stdout, untraced.stdout, "\(compiler) \(mode)", file: file, line: line)
        let trace = try RecordedTrace(url)
        let context = "\(compiler) \(mode): warnings \(trace.trace.warnings)\n\(trace.tree)"
        let symbols = Symbolicator(modules: trace.trace.modules, warn: { _ in })
        let muted = trace.trace.muted.map { symbols.symbolicate($0.function, atTick: $0.mutedTick).name }
        XCTAssertEqual(muted, ["victim"], context, file: file, line: line)
        // Nothing lost, and nothing said to be.
        let header = trace.trace.header
        XCTAssertEqual(header.drops, 0, context, file: file, line: line)
        XCTAssertEqual(header.mutingDrops, 0, context, file: file, line: line)
        XCTAssertEqual(header.lost, 0, context, file: file, line: line)
        XCTAssertEqual(trace.trace.warnings, [], context, file: file, line: line)
        return (trace, url, context)
    }

    /// The second thread's first call is victim's: its entry handler attaches the thread and is
    /// held there, its frame not yet pushed, while victim is muted and its exits go. Released, its
    /// call is one of a muted function's (not timed) and its frame is not left behind: after(),
    /// called next, is the thread's only call, at depth 0, whole.
    func testACallWhoseEntryWasUnderWayWhenItsFunctionWasMutedLeavesNoFrameBehind() throws {
        for compiler in Compiler.allCases {
            let (trace, _, context) = try run("entering", compiler)
            let thread = trace.calls.filter { $0.name == "after" }.map(\.stream)
            XCTAssertEqual(thread.count, 1, context)
            let calls = trace.calls.filter { $0.stream == thread.first }
            XCTAssertEqual(calls.map(\.name), ["after"], context)
            XCTAssertEqual(calls.first?.depth, 0, context)
            XCTAssertEqual(calls.first?.unwound, false, context)
            assertCost(calls.first, atLeastMs: 20, below: 2_000, in: trace)
        }
    }

    /// The second thread's call of victim (`mode`), blocked from before the muting until 200 ms
    /// after it: recorded under holder, at least as long as it was held, `unwound` or not, with
    /// after() beside it.
    private func assertHeldCallRecorded(_ mode: String, unwound: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        for compiler in Compiler.allCases {
            let (trace, _, context) = try run(mode, compiler, file: file, line: line)
            let victim = trace.calls(named: "victim")
            XCTAssertEqual(victim.count, 1, context, file: file, line: line)
            XCTAssertEqual(victim.first?.unwound, unwound, context, file: file, line: line)
            XCTAssertEqual(victim.first?.depth, 1, context, file: file, line: line)
            assertCost(victim.first, atLeastMs: 200, below: 10_000, in: trace, file: file, line: line)
            XCTAssertEqual(trace.calls.filter { $0.stream == victim.first?.stream }.map(\.name), ["holder", "victim", "after"],
                           context, file: file, line: line)
        }
    }

    /// The call's exit is kept until it ends: it is recorded whole.
    func testACallOpenWhileItsFunctionIsMutedIsRecordedToItsEnd() throws {
        try assertHeldCallRecorded("open", unwound: false)
    }

    /// The same call left by a longjmp to its caller: recorded as unwound, and the thread's later
    /// calls are where they belong.
    func testACallOpenWhileItsFunctionIsMutedAndLeftByLongjmpIsRecordedUnwound() throws {
        try assertHeldCallRecorded("jump", unwound: true)
    }
}
