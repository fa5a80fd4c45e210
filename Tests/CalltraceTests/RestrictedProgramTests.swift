@testable import CalltraceKit
import Foundation
import XCTest

/// Programs that restrict themselves (docs/design.md "Programs that restrict themselves"): seccomp
/// strict mode, a seccomp filter that kills on a system call the runtime makes, one on every
/// thread, one that allows what the runtime does, and PR_SET_TSC, each through glibc's wrapper
/// and through syscall(). Each must print what it prints untraced and exit as it does; its trace
/// says what the runtime did, and the calls it timed are there.
final class RestrictedProgramTests: XCTestCase {
    private struct Mode {
        var name: String
        var step: TraceRestriction.Step
        var answer: TraceRestriction.Answer
        /// The calls after the step are timed (the 40 ms nap, compute).
        var timedOn: Bool { !answer.stopsTiming }
    }

    private let modes = [
        Mode(name: "strict", step: .seccompStrict, answer: .stopped),
        Mode(name: "strict-syscall", step: .seccompStrict, answer: .stopped),
        Mode(name: "kill-filter", step: .seccompFilter, answer: .stopped),
        Mode(name: "tsync-filter", step: .seccompFilterOnAllThreads, answer: .stoppedEverywhere),
        Mode(name: "allow-filter", step: .seccompFilter, answer: .timedOn),
        Mode(name: "tsc", step: .tscForbidden, answer: .clockSystemCall),
        Mode(name: "tsc-syscall", step: .tscForbidden, answer: .clockSystemCall),
    ]

    /// "nap_ns N" differs from run to run; the rest is the program's output.
    private func output(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { !$0.hasPrefix("nap_ns ") }
    }

    func testRestrictedProgramsRunAsUntracedAndSayWhatWasTimed() throws {
        for compiler in Compiler.allCases {
            let plain = try Fixture.build(["restrict.c"], compiler: compiler, wrapper: false, name: "restrict_plain")
            let traced = try Fixture.build(["restrict.c"], compiler: compiler)
            for mode in modes {
                let untraced = try Command.run(plain.binary.path, [mode.name], timeout: 60)
                XCTAssertTrue(untraced.stdout.hasPrefix("result "), "\(mode.name) untraced: \(untraced)")
                for threshold in ["1ms", "0"] {
                    let label = "\(compiler) \(mode.name) threshold \(threshold)"
                    let (result, url) = try traced.run([mode.name], environment: ["CALLTRACE_THRESHOLD": threshold],
                                                       traceName: "\(mode.name)-\(threshold)", timeout: 60)
                    assertDidNotHang(result, label)
                    XCTAssertEqual(result.status, untraced.status, "\(label): \(result)")
                    XCTAssertEqual(output(result.stdout), output(untraced.stdout), "\(label): \(result)")
                    let trace = try RecordedTrace(url)
                    let context = "\(label):\n\(trace.tree)\n\(trace.trace.warnings)"
                    XCTAssertFalse(trace.trace.header.crashed, context)
                    XCTAssertTrue(trace.trace.header.closedCleanly, context)
                    XCTAssertEqual(trace.trace.restrictions.map(\.step), [mode.step], context)
                    XCTAssertEqual(trace.trace.restrictions.map(\.answer), [mode.answer], context)
                    // Timed before the step, whatever it is: the 30 ms nap inside `before`.
                    assertCost(trace.calls(named: "before").first, atLeastMs: 30, below: 1000, in: trace)
                    let laterNaps = trace.calls(named: "nap").filter { $0.treeDepth == 1 }
                    if mode.timedOn {
                        assertCost(laterNaps.first, atLeastMs: 40, below: 1000, in: trace)
                        XCTAssertEqual(trace.calls(named: "compute").count, 1, context)
                        XCTAssertFalse(trace.trace.warnings.contains { $0.contains("restricted itself") }, context)
                    } else {
                        XCTAssertTrue(laterNaps.isEmpty, context)
                        XCTAssertTrue(trace.calls(named: "compute").isEmpty, context)
                        XCTAssertTrue(trace.calls(named: "main").allSatisfy(\.unfinished), context)
                        XCTAssertTrue(trace.trace.warnings.contains { $0.contains("restricted itself") }, context)
                    }
                }
            }
        }
    }

    /// `info` names the step and the answer.
    func testInfoSaysWhatTheRuntimeDid() throws {
        let traced = try Fixture.build(["restrict.c"], compiler: .gcc)
        let (result, url) = try traced.run(["kill-filter"], environment: ["CALLTRACE_THRESHOLD": "1ms"], timeout: 60)
        XCTAssertEqual(result.status, 0, "\(result)")
        let info = try calltrace(["info", url.path])
        XCTAssertEqual(info.status, 0, "\(info)")
        let row = info.stdout.split(separator: "\n").first { $0.hasPrefix("restricted:") }
        XCTAssertNotNil(row, info.stdout)
        XCTAssertTrue(row?.contains("a seccomp filter; its calls no longer timed") == true, info.stdout)
    }
}
