@testable import CalltraceKit
import Foundation
import XCTest

/// Overhead compensation as the reader applies it (synthetic traces, 1 tick = 1 ns): a CALL record
/// with the descendants flag counts the timed calls beneath it; its cost is the measured duration
/// less that many times the header's per-call hook cost, and less its own share; `--threshold`
/// and the views use the cost unless asked for measured times (`--raw`).
final class OverheadReaderTests: XCTestCase {
    typealias T = SyntheticTrace

    private func trace(pair: UInt64 = 25, own: UInt64 = 10) -> T {
        var calls = T.Calls()
        var payload = calls.call(function: 0x2000, start: 1_000, duration: 3_000_000, depth: 1, descendants: 100_000)
        payload += calls.call(function: 0x1000, start: 500, duration: 9_000_000, depth: 0, descendants: 160_001)
        payload += calls.call(function: 0x3000, start: 9_000_000, duration: 1_000_000, depth: 0)
        payload += calls.call(function: 0x4000, start: 10_000_000, duration: 1_000, depth: 0, descendants: 1_000)
        var trace = T()
        trace.overheadPairTicks = pair
        trace.overheadOwnTicks = own
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: payload)]
        return trace
    }

    func testCostIsTheMeasuredDurationLessTheHooksBeneathIt() throws {
        let read = try DecodedTrace.read(bytes: trace().bytes)
        let records = read.records(ofStream: 1)
        XCTAssertEqual(records.map(\.durationTicks), [3_000_000, 9_000_000, 1_000_000, 1_000])
        XCTAssertEqual(records.map(\.overheadTicks), [2_500_010, 4_000_035, 10, 1_000], "capped at the duration")
        XCTAssertEqual(records.map(\.costTicks), [499_990, 4_999_965, 999_990, 0])
        XCTAssertEqual(records.map(\.endTick), [3_001_000, 9_000_500, 10_000_000, 10_001_000], "placed in time as measured")
        XCTAssertEqual(records.map(\.depth), [1, 0, 0, 0], "the extra varint is read before the next record")
    }

    func testTraceWithoutCalibrationTakesNothingOut() throws {
        let read = try DecodedTrace.read(bytes: trace(pair: 0, own: 0).bytes)
        XCTAssertEqual(read.records(ofStream: 1).map(\.costTicks), [3_000_000, 9_000_000, 1_000_000, 1_000])
    }

    func testMinimumDurationFiltersOnCostUnlessMeasured() throws {
        let bytes = trace().bytes
        // A cost is kept when it may reach the minimum within its uncertainty (half the overhead
        // taken out): 0x2000 costs 0.5 ms of its 3 measured, give or take 1.25 ms.
        let byCost = try DecodedTrace.read(bytes: bytes, options: .init(minimumDuration: Nanoseconds(800_000)))
        XCTAssertEqual(byCost.records(ofStream: 1).map(\.function), [0x2000, 0x1000, 0x3000])
        let higher = try DecodedTrace.read(bytes: bytes, options: .init(minimumDuration: Nanoseconds(2_000_000)))
        XCTAssertEqual(higher.records(ofStream: 1).map(\.function), [0x1000])
        let measured = try DecodedTrace.read(bytes: bytes, options: .init(minimumDuration: Nanoseconds(800_000),
                                                                         measured: true))
        XCTAssertEqual(measured.records(ofStream: 1).map(\.function), [0x2000, 0x1000, 0x3000])
    }

    func testViewsShowCostsOrMeasuredTimes() throws {
        let bytes = trace().bytes
        let costs = try viewText(ReportTreeView.self, bytes)
        let measured = try viewText(ReportTreeView.self, bytes, measured: true)
        // The first call's cost is mostly taken-out overhead (4 of its 9 ms): its uncertainty, half
        // of that, is shown, and a line above the tree says what it means.
        XCTAssertEqual(costs.split(separator: "\n").map { $0.prefix(13) },
                       ["(±X ms): the ", " 0|   5.00 ms", " 1|   0.50 ms", " 0|   1.00 ms", " 0|   0.00 ms"])
        XCTAssertTrue(costs.split(separator: "\n")[1].hasSuffix(" (±2.00 ms)"), costs)
        XCTAssertTrue(costs.split(separator: "\n")[2].hasSuffix(" (±1.25 ms)"), costs)
        XCTAssertFalse(costs.split(separator: "\n")[3].contains("±"), "hardly any overhead taken out; \(costs)")
        XCTAssertEqual(measured.split(separator: "\n").map { $0.prefix(13) },
                       [" 0|   9.00 ms", " 1|   3.00 ms", " 0|   1.00 ms", " 0|   0.00 ms"])
        let jsonl = try viewText(ReportJSONLView.self, bytes)
        XCTAssertTrue(jsonl.contains("\"cost\":4.999965,\"overhead\":4.000035,"), jsonl)
        let raw = try viewText(ReportJSONLView.self, bytes, measured: true)
        XCTAssertTrue(raw.contains("\"cost\":9.000000,\"overhead\":4.000035,"), raw)
    }

    func testInfoShowsTheCalibration() throws {
        let info = InfoRenderer(trace: try TraceReader.read(bytes: trace().bytes)).render()
        XCTAssertTrue(info.contains("overhead:") && info.contains("25 ns per timed call"), info)
        let none = InfoRenderer(trace: try TraceReader.read(bytes: trace(pair: 0, own: 0).bytes)).render()
        XCTAssertTrue(none.contains("not compensated"), none)
        XCTAssertTrue(none.contains("preemption:   not sampled\n"), none)
    }
}
