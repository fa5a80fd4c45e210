import CalltraceKit
import Foundation
import XCTest

/// Overhead compensation on real programs: a call with millions of tiny instrumented descendants
/// is reported near what it costs untraced, not at its measured time (which the hooks multiply),
/// and never below what it surely took (a sleep). The fixture times its own calls (its main is not
/// instrumented), built once with hooks and once without.
final class OverheadCompensationTests: XCTestCase {
    private let calls = "2000000"
    /// Muting would take the tiny function's hooks out altogether; here the compensation alone is tested.
    private let noMuting = ["CALLTRACE_MUTE": "off"]

    /// "many_tiny 12.345\nsleepy_many ..." -> [name: ms]
    private func selfTimes(_ stdout: String) -> [String: Double] {
        var times: [String: Double] = [:]
        for line in stdout.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let ms = Double(parts[1]) { times[String(parts[0])] = ms }
        }
        return times
    }

    func testCostLeavesOutTheHooksOfMillionsOfCalls() throws {
        for compiler in Compiler.allCases {
            let plain = try Fixture.build(["overhead.c"], compiler: compiler, flags: ["-O2", "-g", "-DUNTRACED"],
                                          name: "overhead-plain")
            let untraced = selfTimes(try plain.runUntraced([calls]).stdout)
            let fixture = try Fixture.build(["overhead.c"], compiler: compiler)
            let (result, url) = try fixture.run([calls], environment: ["CALLTRACE_THRESHOLD": "1ms"].merging(noMuting) { $1 })
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let measured = selfTimes(result.stdout)
            let trace = try RecordedTrace(url)
            let context = "\(compiler): untraced \(untraced), traced \(measured)\n\(trace.tree)"
            let pair = trace.trace.clock.duration(ticks: trace.trace.header.overheadPairTicks)
            XCTAssertGreaterThan(pair.value, 0, "calibrated hook cost in the header; \(context)")
            guard let base = untraced["many_tiny"], let raw = measured["many_tiny"],
                  let tiny = trace.calls(named: "many_tiny").first,
                  let sleepy = trace.calls(named: "sleepy_many").first else {
                XCTFail("calls missing; \(context)")
                continue
            }
            // The hooks of two million calls cost far more than the calls: the trace shows it...
            XCTAssertGreaterThan(raw, 3 * base + 10, "the hooks did not cost what this test needs; \(context)")
            // ...and takes most of it out (generously: the hooks cost more on a busy machine than
            // in the start-up calibration, which errs on the side of leaving overhead in).
            let leftOver = base + 0.4 * (raw - base)
            XCTAssertLessThan(tiny.cost.milliseconds, leftOver, context)
            // Never below what surely happened: the sleep.
            assertCost(sleepy, atLeastMs: 30, below: 30 + leftOver + 20, in: trace)
            // The trace keeps what it took out: measured time = cost + overhead.
            let record = try XCTUnwrap(trace.trace.records.first { trace.trace.clock.duration(ticks: $0.costTicks) == tiny.cost })
            let overhead = trace.trace.clock.duration(ticks: record.overheadTicks).milliseconds
            XCTAssertGreaterThan(overhead, raw / 2, context)
            XCTAssertLessThanOrEqual(tiny.cost.milliseconds + overhead, raw + 0.01, context)
        }
    }

    /// The threshold is decided on the cost: a call that crossed it only through the hooks
    /// beneath it is not recorded; one that sleeps past it is.
    func testCallsThatCrossTheThresholdOnlyThroughHooksAreNotRecorded() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["overhead.c"], compiler: compiler)
            let (result, url) = try fixture.run(["1500000"], environment: ["CALLTRACE_THRESHOLD": "25ms"].merging(noMuting) { $1 })
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let measured = selfTimes(result.stdout)
            let trace = try RecordedTrace(url)
            let context = "\(compiler): traced \(measured)\n\(trace.tree)"
            XCTAssertGreaterThanOrEqual(measured["many_tiny"] ?? 0, 25, "measured past the threshold; \(context)")
            XCTAssertEqual(trace.calls.map(\.name), ["sleepy_many"], context)
        }
    }
}
