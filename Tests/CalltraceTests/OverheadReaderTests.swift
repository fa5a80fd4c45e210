@testable import CalltraceKit
import Foundation
import XCTest

/// Overhead compensation as the reader sees it (synthetic traces, 1 tick = 1 ns): a CALL record
/// with the overhead flag carries the ticks taken out; the cost is the measured duration less
/// them; `--threshold` and the views use the cost unless asked for measured times (`--raw`).
final class OverheadReaderTests: XCTestCase {
    typealias T = SyntheticTrace

    private func trace() -> T {
        var calls = T.Calls()
        var payload = calls.call(function: 0x2000, start: 1_000, duration: 3_000_000, depth: 1, overhead: 2_500_000)
        payload += calls.call(function: 0x1000, start: 500, duration: 9_000_000, depth: 0, overhead: 4_000_000)
        payload += calls.call(function: 0x3000, start: 9_000_000, duration: 1_000_000, depth: 0)
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: payload)]
        return trace
    }

    func testCostIsTheMeasuredDurationLessTheOverhead() throws {
        let read = try TraceReader.read(bytes: trace().bytes)
        let records = read.records(ofStream: 1)
        XCTAssertEqual(records.map(\.durationTicks), [3_000_000, 9_000_000, 1_000_000])
        XCTAssertEqual(records.map(\.overheadTicks), [2_500_000, 4_000_000, 0])
        XCTAssertEqual(records.map(\.costTicks), [500_000, 5_000_000, 1_000_000])
        XCTAssertEqual(records.map(\.endTick), [3_001_000, 9_000_500, 10_000_000], "placed in time as measured")
        XCTAssertEqual(records.map(\.depth), [1, 0, 0], "the extra varint is read before the next record")
    }

    func testMinimumDurationFiltersOnCostUnlessMeasured() throws {
        let bytes = trace().bytes
        let byCost = try TraceReader.read(bytes: bytes, options: .init(minimumDuration: Nanoseconds(800_000)))
        XCTAssertEqual(byCost.records(ofStream: 1).map(\.function), [0x1000, 0x3000])
        let measured = try TraceReader.read(bytes: bytes, options: .init(minimumDuration: Nanoseconds(800_000),
                                                                         measured: true))
        XCTAssertEqual(measured.records(ofStream: 1).map(\.function), [0x2000, 0x1000, 0x3000])
    }

    func testTreeShowsCostsOrMeasuredTimes() throws {
        let read = try TraceReader.read(bytes: trace().bytes)
        let symbolicator = Symbolicator(modules: read.modules, lines: false, warn: { _ in })
        let costs = TreeRenderer(trace: read, symbolicator: symbolicator).render()
        let measured = TreeRenderer(trace: read, symbolicator: symbolicator, measured: true).render()
        XCTAssertEqual(costs.split(separator: "\n").map { $0.prefix(13) }, [" 0|   5.00 ms", " 1|   0.50 ms", " 0|   1.00 ms"])
        XCTAssertEqual(measured.split(separator: "\n").map { $0.prefix(13) }, [" 0|   9.00 ms", " 1|   3.00 ms", " 0|   1.00 ms"])
        let jsonl = JSONLRenderer(trace: read, symbolicator: symbolicator).render()
        XCTAssertTrue(jsonl.contains("\"cost\":5.000000,\"overhead\":4.000000,"), jsonl)
    }
}
