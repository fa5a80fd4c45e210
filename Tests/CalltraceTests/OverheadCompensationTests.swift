import CalltraceKit
import Foundation
import XCTest

/// Overhead compensation on real programs: a call with millions of tiny instrumented descendants
/// is reported well below its measured time (which the hooks multiply), never below what it surely
/// took (a sleep), and the threshold is decided on that cost. The fixture times its own calls (its
/// main is not instrumented), built once with hooks and once without.
final class OverheadCompensationTests: XCTestCase {
    private let calls = 2_000_000
    /// Muting would take the tiny function's hooks out altogether; here the compensation alone is tested.
    private let noMuting = ["CALLTRACE_MUTE": "off"]

    func testCostLeavesOutTheHooksOfMillionsOfCalls() throws {
        for compiler in Compiler.allCases {
            let plain = try Fixture.build(["overhead.c"], compiler: compiler, flags: ["-O2", "-g", "-DUNTRACED"],
                                          name: "overhead-plain")
            let untraced = fixtureTimes(try plain.runUntraced([String(calls)]).stdout)
            let fixture = try Fixture.build(["overhead.c"], compiler: compiler)
            let (result, url) = try fixture.run([String(calls)],
                                                environment: ["CALLTRACE_THRESHOLD": "1ms"].merging(noMuting) { $1 })
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let measured = fixtureTimes(result.stdout)
            // Every recorded call, also one whose final cost fell under the threshold.
            let trace = try RecordedTrace(url, measured: true)
            let header = trace.trace.header
            let context = "\(compiler): untraced \(untraced), traced \(measured), pair \(header.overheadPairTicks) "
                + "own \(header.overheadOwnTicks) ticks\n\(trace.tree)"
            XCTAssertGreaterThan(header.overheadPairTicks, .zero, "calibrated hook cost in the header; \(context)")
            guard let base = untraced["many_tiny"], let raw = measured["many_tiny"],
                  let tiny = trace.calls(named: "many_tiny").first(where: { $0.depth == 0 }),
                  let sleepy = trace.calls(named: "sleepy_many").first,
                  let record = trace.trace.records.first(where: { $0.depth == 0 && trace.trace.clock.duration(ticks: $0.durationTicks) == tiny.cost })
            else {
                XCTFail("calls missing; \(context)")
                continue
            }
            // The runtime counted every timed call beneath many_tiny (and, if a tiny call was
            // preempted past the threshold, the calls of a calibration that followed it).
            let descendants = try descendantCounts(url)[record.startTick] ?? 0
            XCTAssertTrue((UInt64(calls)...UInt64(calls) + 20_000).contains(descendants), "\(descendants); \(context)")
            // The hooks of two million calls cost far more than the calls: the measured time shows
            // it, and the cost leaves out the calibrated cost of every hook pair beneath.
            XCTAssertGreaterThan(raw, 3 * base + 10, "the hooks did not cost what this test needs; \(context)")
            let clock = trace.trace.clock
            let calibrated = clock.duration(ticks: record.overheadTicks).milliseconds
            let takenOut = tiny.cost.milliseconds - tiny.reportedCost.milliseconds
            XCTAssertEqual(takenOut, calibrated, accuracy: 0.01 * calibrated + 0.01, context)
            // On a quiet machine that is nearly all of the hooks' cost. The calibration keeps the
            // lowest cost it measured, so on a busy one, where each hook pair of the run cost several
            // times the calibrated one, more stays in. The hooks' cost also moves from run to run
            // and within one (by a fifth here), so a calibration may be above what they cost in the
            // call: the uncertainty `report` states (half what was taken out) covers it, and the
            // untraced time is never below the cost with it (docs/design.md, "Overhead compensation").
            let pairNs = clock.duration(ticks: header.overheadPairTicks).milliseconds * 1e6
            let runPairNs = (raw - base) * 1e6 / Double(descendants)
            XCTAssertLessThanOrEqual(takenOut, 2 * (raw - base) + 1, context)
            XCTAssertGreaterThanOrEqual(tiny.reportedCost.milliseconds + tiny.uncertainty.milliseconds, base, context)
            if runPairNs < 3 * pairNs {
                XCTAssertLessThan(tiny.reportedCost.milliseconds, 0.8 * raw, "run pair \(runPairNs) ns; \(context)")
                XCTAssertGreaterThan(takenOut, 0.2 * (raw - base), "run pair \(runPairNs) ns; \(context)")
            }
            // Never below what surely happened, with the stated uncertainty: the sleep.
            XCTAssertGreaterThanOrEqual(sleepy.reportedCost.milliseconds + sleepy.uncertainty.milliseconds, 30, context)
        }
    }

    /// Each recorded call's count of timed descendants, by start tick: the trace read again with a
    /// calibrated cost of one tick a call, none of its own and none for untimed calls (a sled
    /// build's recalibration inside a call runs untimed ones), so the overhead is the count (read
    /// with the real constant, it is capped at the call's duration, which a calibration above
    /// what the hooks cost in the call reaches).
    private func descendantCounts(_ url: URL) throws -> [Ticks: UInt64] {
        var bytes = try Data(contentsOf: url)
        for (offset, value, width) in [(TraceFormat.HeaderOffset.overheadPairTicks, UInt64(1), 8),
                                       (TraceFormat.HeaderOffset.overheadOwnTicks, UInt64(0), 8),
                                       (TraceFormat.HeaderOffset.overheadUntimedTicks, UInt64(0), 4)] {
            for index in 0..<width { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
        }
        let copy = url.deletingLastPathComponent().appendingPathComponent("counted-" + url.lastPathComponent)
        try bytes.write(to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        let trace = try DecodedTrace.read(path: copy.path, options: .init(measured: true))
        return Dictionary(trace.records.map { ($0.startTick, $0.overheadTicks.count) }, uniquingKeysWith: max)
    }

    /// The threshold is decided on the cost: a call that reached it only through the hooks beneath
    /// it is not recorded (on a quiet machine, many_tiny: about 30 ms measured, a few ms of cost);
    /// every recorded call costs at least the threshold.
    func testThresholdIsDecidedOnTheCost() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["overhead.c"], compiler: compiler)
            let (result, url) = try fixture.run(["1500000"],
                                                environment: ["CALLTRACE_THRESHOLD": "25ms"].merging(noMuting) { $1 })
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let trace = try RecordedTrace(url)
            let context = "\(compiler): traced \(fixtureTimes(result.stdout))\n\(trace.tree)"
            XCTAssertTrue(trace.calls.contains { $0.name == "sleepy_many" }, context)
            // ...or may, within its uncertainty (half the overhead taken out, as `report` shows it).
            for call in trace.calls where !call.unfinished && !call.unwound {
                let uncertainty = (call.cost.milliseconds - call.reportedCost.milliseconds) / 2
                XCTAssertGreaterThanOrEqual(call.reportedCost.milliseconds + uncertainty, 25 - 1e-6, "\(call); \(context)")
            }
        }
    }
}
