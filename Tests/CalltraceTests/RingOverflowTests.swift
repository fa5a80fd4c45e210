import CalltraceKit
import Foundation
import XCTest

/// A full ring drops and counts records; it never blocks the program.
final class RingOverflowTests: XCTestCase {
    func testRingOverflowDropsAndCountsRecordsButNeverBlocks() throws {
        let fixture = try Fixture.build(["burst.c"], compiler: .gcc)
        let calls = 100_000
        for buffer in ["8k", "64k"] {
            let start = Date()
            let (result, url) = try fixture.run(["\(calls)"], environment: ["CALLTRACE_THRESHOLD": "0",
                                                                            "CALLTRACE_BUFFER": buffer],
                                                traceName: "burst-\(buffer)")
            let elapsed = Date().timeIntervalSince(start)
            XCTAssertEqual(result.status, 0, "\(buffer): \(result)")
            XCTAssertEqual(result.stdout, "burst: \(burstSum(calls))\n")
            XCTAssertLessThan(elapsed, 10, "\(buffer): the program must never wait for the disk")
            let trace = try RecordedTrace(url)
            let header = trace.trace.header
            // Two 4k blocks usually cannot keep up with this burst, but a drain thread that has the
            // other core to itself may refill them in time: whether calls drop is the machine's
            // business; that nothing else is lost, and nothing waits, is ours.
            // Nothing but the dropped records is missing: leaf × n, burst and main.
            XCTAssertEqual(UInt64(trace.trace.records.count) + header.drops, UInt64(calls + 2),
                           "\(buffer): \(trace.trace.records.count) records + \(header.drops) drops")
            let leaves = trace.calls(named: "leaf")
            XCTAssertTrue(leaves.allSatisfy { $0.depth == 2 && !$0.unfinished && !$0.unwound },
                          "\(buffer): every recorded leaf call is whole")
            XCTAssertTrue(trace.calls.allSatisfy { ["main", "burst", "leaf"].contains($0.name) },
                          "\(buffer): \(Set(trace.calls.map(\.name)))")
            XCTAssertTrue(header.closedCleanly)
            guard header.drops > 0 else { continue }
            XCTAssertTrue(trace.trace.warnings.contains { $0.contains("dropped") }, "\(trace.trace.warnings)")

            let info = try calltrace(["info", url.path])
            XCTAssertEqual(info.status, 0, info.description)
            XCTAssertTrue(info.stdout.split(separator: "\n").contains { $0.hasPrefix("drops:") && $0.hasSuffix(" \(header.drops)") },
                          "\(buffer): info shows the drops:\n\(info.stdout)")
            let report = try calltrace(["report", url.path])
            XCTAssertEqual(report.status, 0, report.description)
            XCTAssertTrue(report.stderr.contains("\(header.drops) calls were dropped"), "\(buffer): \(report.stderr)")
            XCTAssertFalse(report.stdout.contains("dropped"), "warnings go to stderr only")
        }
    }

    /// At threshold 0 the trace opens with two blocks, and the rest of the first ring comes later
    /// (docs/design.md "Start-up"): a burst from the very first call, on the main thread and on
    /// another, outruns the two, and its takers wait for the rest rather than drop a call. (The
    /// calls fit the first ring, 2 MiB: what comes after it depends on the drain thread keeping up,
    /// which is the machine's business: RingOverflowTests above.)
    func testABurstFromTheFirstCallAtThresholdZeroLosesNothing() throws {
        let calls = 60_000
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["burst.c"], compiler: compiler)
            for threads in [0, 1] {
                let label = "\(compiler) \(threads) more threads"
                let (result, url) = try fixture.run(["\(calls)"] + (threads > 0 ? ["threads", "\(threads)"] : []),
                                                    environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_THREADS": "all",
                                                                  "CALLTRACE_MUTE": "off"],
                                                    traceName: "start-burst-\(threads)")
                XCTAssertEqual(result.status, 0, "\(label): \(result)")
                let trace = try RecordedTrace(url)
                let header = trace.trace.header
                XCTAssertEqual(header.drops, 0, "\(label): \(trace.trace.warnings)")
                // leaf × n and burst on each thread, all_burst on each other thread, and main.
                let expected = (calls + 1) * (threads + 1) + threads + 1
                XCTAssertEqual(trace.trace.records.count, expected, "\(label): \(trace.trace.warnings)")
                XCTAssertTrue(header.closedCleanly, label)
            }
        }
    }

    func testRingOverflowWithManyThreadsKeepsCountsConsistent() throws {
        let fixture = try Fixture.build(["burst.c"], compiler: .clang)
        let calls = 20_000, workers = 7
        for buffer in ["8k", "64k"] {
            let (result, url) = try fixture.run(["\(calls)", "threads", "\(workers)"],
                                                environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_BUFFER": buffer,
                                                              "CALLTRACE_THREADS": "all"],
                                                traceName: "burst-\(buffer)")
            XCTAssertEqual(result.status, 0, "\(buffer): \(result)")
            XCTAssertEqual(result.stdout, "burst: \((workers + 1) * burstSum(calls))\n")
            let trace = try RecordedTrace(url)
            let header = trace.trace.header
            // leaf × n and burst on every thread, all_burst on each worker, main.
            let expected = (workers + 1) * (calls + 1) + workers + 1
            XCTAssertEqual(trace.trace.records.count + Int(header.drops), expected,
                           "\(buffer): \(trace.trace.records.count) records + \(header.drops) drops")
            XCTAssertGreaterThan(header.drops, 0, buffer)
            XCTAssertTrue(trace.calls(named: "leaf").allSatisfy { !$0.unfinished && !$0.unwound }, buffer)
            XCTAssertLessThanOrEqual(trace.trace.threads.count, workers + 1, "\(trace.trace.threads)")
            XCTAssertEqual(trace.trace.warnings.filter { !$0.contains("dropped") }, [], buffer)
        }
    }
}
