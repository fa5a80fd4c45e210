@testable import CalltraceKit
import Foundation
import XCTest

/// `export --format otlp` made while the trace is read (`OTLPExportStream`): the same bytes as the
/// view rendered from a whole profile, every span under the parent the tree gives it (across
/// depth gaps too), and memory that does not grow with the calls.
final class OTLPStreamTests: XCTestCase {
    private typealias T = SyntheticTrace
    private let ms: UInt64 = 1_000_000

    /// Thread 4242 "main" (times in ms, depths after the names):
    ///
    ///     main0 [0, 100) > { P1 [10, 60) > { A2 [11, 20), B3 [30, 40), C2 [41, 45) },
    ///                        Q1 [70, 90) > { D3 [75, 80) } }
    ///     tail0 [110, 120)
    ///
    /// P adopts three runs at two depths (B's caller and D's were not recorded), Q one past a gap.
    /// Thread 4243 "worker": W1 [5, 50) > X2 [6, 8), then an unfinished U1 [60, 200). Marks: ready
    /// 35 and between 65, edge 70 (when Q starts), late 130 on main; w 7 on the worker; orphan 50
    /// on a thread with no calls.
    private func gaps() -> [UInt8] {
        let ms = self.ms
        var calls = T.Calls()
        var main: [[UInt8]] = []
        main.append(calls.call(function: 0x3000, start: 11 * ms, duration: 9 * ms, depth: 2))
        main.append(calls.call(function: 0x4000, start: 30 * ms, duration: 10 * ms, depth: 3))
        main.append(calls.call(function: 0x3000, start: 41 * ms, duration: 4 * ms, depth: 2))
        main.append(calls.call(function: 0x2000, start: 10 * ms, duration: 50 * ms, depth: 1))
        main.append(calls.call(function: 0x5000, start: 75 * ms, duration: 5 * ms, depth: 3))
        main.append(calls.call(function: 0x2000, start: 70 * ms, duration: 20 * ms, depth: 1))
        main.append(calls.call(function: 0x1000, start: 0, duration: 100 * ms, depth: 0))
        main.append(calls.call(function: 0x6000, start: 110 * ms, duration: 10 * ms, depth: 0))
        calls.reset()
        let worker = [
            calls.call(function: 0x5000, start: 6 * ms, duration: 2 * ms, depth: 2),
            calls.call(function: 0x4000, start: 5 * ms, duration: 45 * ms, depth: 1),
            calls.call(function: 0x4000, start: 60 * ms, duration: 140 * ms, depth: 1, flags: TraceFormat.CallFlag.unfinished),
        ]
        var trace = T()
        let metadata = T.process(executable: "/usr/bin/app", arguments: ["app"])
            + T.thread(stream: 1, tid: 4242, name: "main") + T.thread(stream: 2, tid: 4243, name: "worker")
            + T.mark("ready", tick: 35 * ms, tid: 4242) + T.mark("between", tick: 65 * ms, tid: 4242)
            + T.mark("edge", tick: 70 * ms, tid: 4242) + T.mark("late", tick: 130 * ms, tid: 4242)
            + T.mark("w", tick: 7 * ms, tid: 4243, stream: 2) + T.mark("orphan", tick: 50 * ms, tid: 9999, stream: 3)
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: main.flatMap { $0 }),
                        .init(stream: 2, tid: 4243, seq: 0, payload: worker.flatMap { $0 }),
                        .init(stream: 0, tid: 0, seq: 0, payload: metadata)]
        return trace.bytes
    }

    private var options: ViewOptions {
        var options = ViewOptions()
        options.hostName = "build-7"
        options.version = "9.8.7"
        return options
    }

    /// Each span as "name under parent@parent's start [start, end)", in ms from the process span's
    /// start, in the order written; and how many lines (requests) held them.
    private func shape(_ text: String) throws -> (spans: [String], requests: Int) {
        let lines = text.split(separator: "\n")
        var spans: [[String: Any]] = []
        for line in lines {
            let request = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let resourceSpans = try XCTUnwrap(request["resourceSpans"] as? [[String: Any]])
            let scopeSpans = try XCTUnwrap(resourceSpans.first?["scopeSpans"] as? [[String: Any]])
            spans += try XCTUnwrap(scopeSpans.first?["spans"] as? [[String: Any]])
        }
        func time(_ span: [String: Any], _ key: String) -> UInt64 { UInt64(span[key] as? String ?? "") ?? 0 }
        let byID = Dictionary(spans.map { ($0["spanId"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(byID.count, spans.count, "unique span ids")
        let origin = try XCTUnwrap(spans.first.map { time($0, "startTimeUnixNano") })
        func ms(_ value: UInt64) -> String { "\((value - origin) / self.ms)" }
        let shapes = spans.map { span -> String in
            let parent = byID[span["parentSpanId"] as? String ?? ""].map {
                "\($0["name"] as? String ?? "?")@\(ms(time($0, "startTimeUnixNano")))"
            } ?? "-"
            return "\(span["name"] as? String ?? "?") under \(parent) "
                + "[\(ms(time(span, "startTimeUnixNano"))), \(ms(time(span, "endTimeUnixNano"))))"
        }
        return (shapes, lines.count)
    }

    /// The stream's bytes are the view's, in requests of any size; calls come latest first (a
    /// parent before its children), each thread's marks after its calls, under the innermost call
    /// holding them.
    func testStreamedSpansAreTheViewsBytesWithParentsAcrossDepthGaps() throws {
        let bytes = gaps()
        let profile = try syntheticProfile(bytes)
        for spansPerRequest in [OTLPExport.spansPerRequest, 3] {
            let view = ByteOutput.text {
                OTLPExport.render(ViewInput([profile]), options: options, to: $0, spansPerRequest: spansPerRequest)
            }
            let streamed = try XCTUnwrap(try streamedOTLP(bytes, options: options, spansPerRequest: spansPerRequest),
                                         "the stream takes the trace")
            XCTAssertEqual(streamed, view, "requests of \(spansPerRequest) spans")
            let (spans, requests) = try shape(streamed)
            XCTAssertEqual(requests, spansPerRequest == 3 ? 6 : 1)
            XCTAssertEqual(spans, [
                "app under - [0, 200)",
                "0x6000 under app@0 [110, 120)",
                "0x1000 under app@0 [0, 100)",
                "0x2000 under 0x1000@0 [70, 90)",
                "0x5000 under 0x2000@70 [75, 80)",
                "0x2000 under 0x1000@0 [10, 60)",
                "0x3000 under 0x2000@10 [41, 45)",
                "0x4000 under 0x2000@10 [30, 40)",
                "0x3000 under 0x2000@10 [11, 20)",
                "ready under 0x4000@30 [35, 35)",
                "between under 0x1000@0 [65, 65)",
                "edge under 0x2000@70 [70, 70)",
                "late under app@0 [130, 130)",
                "0x4000 under app@0 [60, 200)",
                "0x4000 under app@0 [5, 50)",
                "0x5000 under 0x4000@5 [6, 8)",
                "w under 0x5000@6 [7, 7)",
                "orphan under app@0 [50, 50)",
            ])
        }
    }

    /// A stream's first calls decoded after its later ones (`OutOfOrderTrace`): the stream does not
    /// guess, the caller renders the view.
    func testCallsDecodedOutOfOrderAskForTheWholeProfile() throws {
        let bytes = OutOfOrderTrace.bytes
        XCTAssertTrue(try shape(try viewText(OTLPExport.self, bytes)).spans.contains("0x2000 under 0x1000@0 [1, 3)"))
        XCTAssertNil(try streamedOTLP(bytes, spansPerRequest: OTLPExport.spansPerRequest))
    }

    /// The command's output on real traces (recursion with muting's depth gaps, on two threads at
    /// once, a 1 ms threshold's gaps with marks on two threads, unwinding) is the view's, byte for
    /// byte, and was streamed.
    func testCommandWritesTheViewsBytesForRealTraces() throws {
        let recursion = try Fixture.build(["recursion.c"], compiler: .gcc, flags: ["-O1", "-g"])
        let marks = try Fixture.build(["marks.c"], compiler: .clang)
        let exceptions = try Fixture.build(["exceptions.cpp"], compiler: .gcc, cxx: true)
        var options = ViewOptions()
        options.hostName = try hostName()
        options.version = try XCTUnwrap(try calltrace(["--version"]).stdout.split(separator: " ").last)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let runs: [(Fixture, [String], [String: String])] = [
            (recursion, ["walk_sort", "10", "3000"], ["CALLTRACE_THRESHOLD": "0"]),
            (recursion, ["threads", "9", "4"], ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_THREADS": "all"]),
            (marks, [], ["CALLTRACE_THRESHOLD": "1ms", "CALLTRACE_THREADS": "all"]),
            (exceptions, [], ["CALLTRACE_THRESHOLD": "0"]),
        ]
        for (fixture, arguments, environment) in runs {
            let name = ([fixture.binary.lastPathComponent] + arguments).joined(separator: " ")
            let (run, trace) = try fixture.run(arguments, environment: environment,
                                               traceName: "otlp-" + name.replacingOccurrences(of: " ", with: "-"))
            XCTAssertEqual(run.status, 0, run.description)
            defer { try? FileManager.default.removeItem(at: trace) }
            let result = try calltrace(["export", trace.path, "--format", "otlp"])
            XCTAssertEqual(result.status, 0, result.description)
            let profile = try ProfileBuilder.read(path: FilePath(trace.path)) { modules in
                Symbolicator(modules: modules, lines: true, warn: { _ in })
            }.1
            XCTAssertEqual(result.stdout, OTLPExport.text(ViewInput([profile]), options: options), name)
            XCTAssertGreaterThan(profile.callCount, 3, name)
            // The spans were streamed, not made from a profile after all.
            let stream = try XCTUnwrap(OTLPExportStream())
            let streamed = try ProfileBuilder.stream(path: FilePath(trace.path), into: stream) { modules in
                Symbolicator(modules: modules, lines: true, warn: { _ in })
            }
            XCTAssertTrue(stream.finish(trace: streamed.0, profile: streamed.1), name)
        }
    }

    /// Peak memory of `export --format otlp` on 2 M calls is under 1.5 times that on 0.5 M: it
    /// does not grow with the calls (a whole profile takes ~50 bytes a call).
    func testMemoryDoesNotGrowWithCalls() throws {
        let fixture = try Fixture.build(["many_calls.c"], compiler: .gcc)
        func peak(rounds: Int) throws -> Int {
            // A ring that holds every call: a busy machine must not make the run drop any.
            let (run, trace) = try fixture.run(["\(rounds)"], environment: ["CALLTRACE_THRESHOLD": "0",
                                                                              "CALLTRACE_BUFFER": "64M"],
                                               traceName: "otlp-many-\(rounds)")
            XCTAssertEqual(run.status, 0, run.description)
            defer { try? FileManager.default.removeItem(at: trace) }
            let result = try Command.run("/bin/sh", [
                "-c", "/usr/bin/time -f 'peak %M' \"$0\" export \"$1\" --format otlp -o /dev/null && echo done",
                Workspace.cli.path, trace.path,
            ])
            XCTAssertEqual(result.status, 0, result.description)
            XCTAssertEqual(result.stdout, "done\n", result.description)
            guard let kilobytes = result.stderr.split(separator: "\n").last(where: { $0.hasPrefix("peak ") })
                .flatMap({ Int($0.dropFirst(5)) }) else { throw TestFailure("no peak in \(result.stderr)") }
            return kilobytes
        }
        let small = try peak(rounds: 170_000)
        let large = try peak(rounds: 670_000)
        XCTAssertLessThan(Double(large), 1.5 * Double(small), "peak RSS \(small) KiB for 0.5 M calls, \(large) KiB for 2 M")
    }

    private func hostName() throws -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { throw TestFailure("gethostname failed") }
        return String(cString: name)
    }
}
