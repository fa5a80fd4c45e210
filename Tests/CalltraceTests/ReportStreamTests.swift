@testable import CalltraceKit
import Foundation
import XCTest

/// `report --format jsonl` written while the trace is read (`ReportJSONLStream`): the same bytes as
/// the view rendered from a whole profile, and memory that does not grow with the calls.
final class ReportStreamTests: XCTestCase {
    private typealias T = SyntheticTrace
    private let ms: UInt64 = 1_000_000

    /// The streamed lines of a trace held in memory; nil when the stream asked for a whole profile.
    private func streamed(_ bytes: [UInt8], options: ViewOptions = ViewOptions()) throws -> String? {
        try streamedText(ReportJSONLView.self, bytes, options: options)
    }

    /// main > 3 x (step > 2 x leaf), a chain, and an unfinished call, on two threads.
    private func twoThreads() -> [UInt8] {
        var calls = T.Calls()
        var main: [[UInt8]] = []
        for round in 0..<3 {
            let base = UInt64(round) * 10 * ms + ms
            main.append(calls.call(function: 0x3000, start: base + ms, duration: 2 * ms, depth: 2))
            main.append(calls.call(function: 0x3000, start: base + 4 * ms, duration: 3 * ms, depth: 2))
            main.append(calls.call(function: 0x2000, start: base, duration: 8 * ms, depth: 1))
        }
        main.append(calls.call(function: 0x1000, start: 0, duration: 40 * ms, depth: 0))
        calls.reset()
        let worker = [
            calls.call(function: 0x5000, start: 2 * ms, duration: 1 * ms, depth: 3),
            calls.call(function: 0x4000, start: 1 * ms, duration: 6 * ms, depth: 1),
            calls.call(function: 0x4000, start: 8 * ms, duration: 9 * ms, depth: 1, flags: TraceFormat.CallFlag.unfinished),
        ]
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: main.flatMap { $0 }),
                        .init(stream: 2, tid: 4243, seq: 0, payload: worker.flatMap { $0 })]
        return trace.bytes
    }

    func testStreamedLinesAreTheViewsBytes() throws {
        let bytes = twoThreads()
        let view = try viewText(ReportJSONLView.self, bytes)
        XCTAssertEqual(view.split(separator: "\n").count, 13, view)
        XCTAssertEqual(try streamed(bytes), view)
        var options = ViewOptions()
        options.minimumCost = Nanoseconds(3 * Int64(ms))
        XCTAssertEqual(try streamed(bytes, options: options), try viewText(ReportJSONLView.self, bytes, options: options))
    }

    /// A stream's first calls decoded after its later ones (`OutOfOrderTrace`): the stream does not
    /// guess, the caller renders the view.
    func testCallsDecodedOutOfOrderAskForTheWholeProfile() throws {
        let bytes = OutOfOrderTrace.bytes
        XCTAssertTrue(try viewText(ReportJSONLView.self, bytes).contains("\"function\":\"0x1000\",\"cost\":9.000000,\"overhead\":0.000000,\"self\":7.000000"))
        XCTAssertNil(try streamed(bytes))
    }

    /// The command's output on real traces (threads, recursion, unwinding) is the view's.
    func testCommandWritesTheViewsBytesForRealTraces() throws {
        for (source, cxx) in [("threads.c", false), ("exceptions.cpp", true)] {
            let fixture = try Fixture.build([source], compiler: .gcc, cxx: cxx)
            let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0"])
            XCTAssertEqual(run.status, 0, run.description)
            let result = try calltrace(["report", trace.path, "--format", "jsonl"])
            XCTAssertEqual(result.status, 0, result.description)
            let profile = try ProfileBuilder.read(path: FilePath(trace.path)) { modules in
                Symbolicator(modules: modules, lines: true, warn: { _ in })
            }.1
            XCTAssertEqual(result.stdout, ReportJSONLView.text(ViewInput([profile]), options: ViewOptions()), source)
            XCTAssertFalse(result.stdout.isEmpty, source)
        }
    }

    /// Peak memory of `report --format jsonl` on 2 M calls is under 1.5 times that on 0.5 M: it
    /// does not grow with the calls (a whole profile takes ~50 bytes a call).
    func testMemoryDoesNotGrowWithCalls() throws {
        let fixture = try Fixture.build(["many_calls.c"], compiler: .gcc)
        func peak(rounds: Int) throws -> Int {
            // A ring that holds every call: a busy machine must not make the run drop any.
            let (run, trace) = try fixture.run(["\(rounds)"], environment: ["CALLTRACE_THRESHOLD": "0",
                                                                              "CALLTRACE_BUFFER": "64M"],
                                               traceName: "many-\(rounds)")
            XCTAssertEqual(run.status, 0, run.description)
            defer { try? FileManager.default.removeItem(at: trace) }
            let (kilobytes, result) = try PeakMemory.of(["report", trace.path, "--format", "jsonl"], into: "wc -l")
            XCTAssertEqual(Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), 3 * rounds + 1,
                           "every call a line: \(result)")
            return kilobytes
        }
        let small = try peak(rounds: 170_000)
        let large = try peak(rounds: 670_000)
        XCTAssertLessThan(Double(large), 1.5 * Double(small), "peak RSS \(small) KiB for 0.5 M calls, \(large) KiB for 2 M")
    }
}
