@testable import CalltraceKit
import XCTest

/// Tree building is linear whatever depths and start times a file claims. The work is counted
/// (pending records looked at), not timed, so the bound is exact on any machine.
final class ReaderTreeWorkTests: XCTestCase {
    /// Pending records looked at per record, at most: a fixed number, not the builder's own
    /// constant, so that raising that constant far enough fails here.
    private let workPerRecord = 100

    /// One call that starts late, then 20,000 calls deeper than it that all start at tick 0:
    /// each one is "interleaved" with every record still pending, which made every scan walk
    /// the whole stack (2 * 10^8 steps; 200,000 calls took hours).
    func testCraftedInterleavedRecordsBuildInLinearWork() {
        let count = 20_000
        var records = [CallRecord(function: 1, callSite: 0, startTick: 1_000_000, durationTicks: 5, depth: 0, stream: 1)]
        for index in 0..<count {
            records.append(CallRecord(function: UInt64(2 + index % 7), callSite: 0, startTick: 0, durationTicks: 1,
                                      depth: 5, stream: 1))
        }
        var work = 0
        let links = Self.links(records, work: &work)
        XCTAssertEqual(links.parent.count, records.count)
        XCTAssertLessThanOrEqual(work, workPerRecord * records.count, "pending records looked at for \(records.count) records")
        XCTAssertEqual(preOrder(links).count, records.count, "every record is in the tree")
    }

    /// The same bound for a sawtooth of depths that go up and down by large steps.
    func testCraftedSawtoothDepthsBuildInLinearWork() {
        var records: [CallRecord] = []
        for index in 0..<200_000 {
            let depth = UInt32(index % 1000 < 500 ? index % 500 : 500 - index % 500)
            records.append(CallRecord(function: 1, callSite: 0, startTick: Ticks(UInt64((index * 7919) % 100_000)),
                                      durationTicks: 3, depth: depth, stream: 1))
        }
        var work = 0
        let links = Self.links(records, work: &work)
        XCTAssertEqual(links.parent.count, records.count)
        XCTAssertLessThanOrEqual(work, workPerRecord * records.count)
    }

    /// A real nesting is unchanged by the bound: children under parents, in start order.
    func testNestedCallsStillNest() {
        // Exit order: leaf a, leaf b, their parent, the root.
        let records = [
            CallRecord(function: 3, callSite: 0, startTick: 10, durationTicks: 5, depth: 2, stream: 1),
            CallRecord(function: 4, callSite: 0, startTick: 20, durationTicks: 5, depth: 2, stream: 1),
            CallRecord(function: 2, callSite: 0, startTick: 5, durationTicks: 30, depth: 1, stream: 1),
            CallRecord(function: 1, callSite: 0, startTick: 0, durationTicks: 50, depth: 0, stream: 1),
        ]
        var work = 0
        let shape = preOrder(Self.links(records, work: &work)).map { "\($0.depth):\(records[$0.node].function)" }
        XCTAssertEqual(shape, ["0:1", "1:2", "2:3", "2:4"])
    }

    private static func links(_ records: [CallRecord], work: inout Int) -> CallTreeBuilder.TreeLinks {
        records.withUnsafeBufferPointer { CallTreeBuilder.links(RecordOrder(records: $0), work: &work) }
    }
}
