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
            XCTAssertTrue(try streams(OTLPExport.self, path: trace.path), name)
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
            return try PeakMemory.of(["export", trace.path, "--format", "otlp", "-o", "/dev/null"]).kilobytes
        }
        let small = try peak(rounds: 170_000)
        let large = try peak(rounds: 670_000)
        XCTAssertLessThan(Double(large), 1.5 * Double(small), "peak RSS \(small) KiB for 0.5 M calls, \(large) KiB for 2 M")
    }

    /// Random programs (fixed seeds): nested calls under a threshold, callers whose callees are
    /// left out one or two levels deep (depth gaps of two and three), a muted function (which
    /// leaves runs a call adopts a part of: the profile is asked for), zero-length calls and calls
    /// starting on their parent's tick, unwound calls,
    /// unfinished calls written last innermost first, thousands of calls on a thread (records
    /// spilling to the spool across chunk boundaries), threads sharing a tid, blocks of several
    /// threads interleaved, marks on call boundaries and on threads with no calls: whenever the
    /// stream takes the trace, its bytes are the view's.
    func testRandomProgramsGiveTheViewsBytes() throws {
        for seed in UInt64(1)...40 {
            var random = SplitMix(seed: seed)
            let program = RandomProgram(random: &random, threads: 1 + Int(seed % 4), callsPerThread: seed % 5 == 0 ? 3500 : 300,
                                        zeroEntry: seed % 3 == 0 ? 20 : 0, zeroExit: seed % 3 == 0 ? 15 : 0,
                                        threshold: [0, 0, 40, 300][Int(seed % 4)],
                                        muted: seed % 3 == 1 ? [0x9000] : [], gaps: seed % 3 == 2 ? 20 : 0)
            let bytes = program.trace.bytes
            let profile = try syntheticProfile(bytes)
            XCTAssertTrue(profile.threads.contains { $0.tid == 7777 && $0.count == 0 }, "a thread with no calls")
            if seed % 3 == 2 {
                let gaps = Set(profile.threads.flatMap { thread in
                    (0..<thread.count).compactMap { call in
                        thread.parent[call] < 0 ? nil : thread.depth(call) - thread.depth(Int(thread.parent[call]))
                    }
                })
                XCTAssertTrue(gaps.isSuperset(of: [1, 2, 3]), "seed \(seed): depth gaps of one and two levels")
            }
            for spansPerRequest in [OTLPExport.spansPerRequest, 7] {
                let view = ByteOutput.text {
                    OTLPExport.render(ViewInput([profile]), options: options, to: $0, spansPerRequest: spansPerRequest)
                }
                guard let streamed = try streamedOTLP(bytes, options: options, spansPerRequest: spansPerRequest) else {
                    // Only muting's partial runs ask for the profile.
                    XCTAssertEqual(seed % 3, 1, "seed \(seed) streams")
                    continue
                }
                XCTAssertEqual(streamed, view, "seed \(seed), \(spansPerRequest) spans a request")
            }
        }
    }

    /// A trace of one thread, 4242, whose calls are `payload`, in one block.
    private func mainThreadOnly(_ payload: [UInt8]) -> [UInt8] {
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: payload)]
        return trace.bytes
    }

    /// A counter coarser than the calls: a call that began and ended on one tick, then its
    /// sibling beginning on that tick, and a call's first callee beginning on the tick its caller
    /// and that caller's sibling did. The tree builder passes over the calls of that tick; so
    /// does `PendingRuns`, and the trace streams (it asked for the whole profile).
    func testCallsOnOneTickStream() throws {
        var calls = T.Calls()
        let main = calls.call(function: 0x2000, start: 10 * ms, duration: 0, depth: 1)
            + calls.call(function: 0x4000, start: 12 * ms, duration: 0, depth: 2)
            + calls.call(function: 0x5000, start: 12 * ms, duration: 8 * ms, depth: 2)
            + calls.call(function: 0x3000, start: 10 * ms, duration: 20 * ms, depth: 1)
            + calls.call(function: 0x6000, start: 40 * ms, duration: 0, depth: 1)
            + calls.call(function: 0x8000, start: 40 * ms, duration: 10 * ms, depth: 2)
            + calls.call(function: 0x7000, start: 40 * ms, duration: 20 * ms, depth: 1)
            + calls.call(function: 0x1000, start: 0, duration: 100 * ms, depth: 0)
        let bytes = mainThreadOnly(main)
        let view = try viewText(OTLPExport.self, bytes)
        XCTAssertEqual(try shape(view).spans, [
            "pid 4242 under - [0, 100)",
            "0x1000 under pid 4242@0 [0, 100)",
            "0x7000 under 0x1000@0 [40, 60)",
            "0x8000 under 0x7000@40 [40, 50)",
            "0x6000 under 0x1000@0 [40, 40)",
            "0x3000 under 0x1000@0 [10, 30)",
            "0x5000 under 0x3000@10 [12, 20)",
            "0x4000 under 0x3000@10 [12, 12)",
            "0x2000 under 0x1000@0 [10, 10)",
        ])
        XCTAssertEqual(try streamedOTLP(bytes, spansPerRequest: OTLPExport.spansPerRequest), view)
        // The folded stacks streamed (the same runs) are the view's too.
        XCTAssertEqual(try XCTUnwrap(try streamedText(FoldedExport.self, bytes)), try viewText(FoldedExport.self, bytes))
        // So are report --format jsonl's lines (self times over the same runs).
        XCTAssertEqual(try XCTUnwrap(try streamedText(ReportJSONLView.self, bytes)), try viewText(ReportJSONLView.self, bytes))
    }

    /// Records in any order (starts on a few ticks, any depths, any lengths: damage, and counters
    /// coarser than the calls): whenever the stream takes them (`PendingRuns.isExact`), every
    /// span's parent and bytes are those of the tree `CallTreeBuilder` builds.
    func testArbitraryRecordsGiveTheViewsBytesWhenTaken() throws {
        var taken = 0
        for seed in UInt64(1)...4000 {
            var random = SplitMix(seed: seed)
            var calls = T.Calls()
            var payload: [UInt8] = []
            let ticks = 2 + random.below(12)
            for _ in 0..<(2 + random.below(40)) {
                payload += calls.call(function: 0x1000 * (1 + random.below(3)), start: random.below(ticks) * ms,
                                      duration: random.below(4) * ms, depth: Int64(random.below(5)))
            }
            var trace = T()
            trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: payload)]
            let bytes = trace.bytes
            guard let streamed = try streamedOTLP(bytes, spansPerRequest: OTLPExport.spansPerRequest) else { continue }
            taken += 1
            XCTAssertEqual(streamed, try viewText(OTLPExport.self, bytes), "seed \(seed)")
            // And the folded stacks streamed over the same runs, whenever that stream takes them.
            if let folded = try streamedText(FoldedExport.self, bytes) {
                XCTAssertEqual(folded, try viewText(FoldedExport.self, bytes), "seed \(seed)")
            }
        }
        XCTAssertGreaterThan(taken, 100, "records the stream takes")
    }

    /// A signal handler's call recorded before the call whose exit hook it interrupted, at the
    /// same depth: runs cannot say it (the tree builder skips it for a shallower parent), so the
    /// stream asks for the whole profile.
    func testSignalHandlersCallAtTheSameDepthAsksForTheWholeProfile() throws {
        var calls = T.Calls()
        let main = calls.call(function: 0x3000, start: 20 * ms, duration: 10 * ms, depth: 2)
            + calls.call(function: 0x9000, start: 40 * ms, duration: 5 * ms, depth: 1)
            + calls.call(function: 0x2000, start: 10 * ms, duration: 40 * ms, depth: 1)
            + calls.call(function: 0x1000, start: 0, duration: 100 * ms, depth: 0)
        let bytes = mainThreadOnly(main)
        let spans = try shape(try viewText(OTLPExport.self, bytes)).spans
        XCTAssertTrue(spans.contains("0x9000 under 0x1000@0 [40, 45)"), "\(spans)")
        XCTAssertTrue(spans.contains("0x3000 under 0x2000@10 [20, 30)"), "\(spans)")
        XCTAssertNil(try streamedOTLP(bytes, spansPerRequest: OTLPExport.spansPerRequest))
    }

    /// The command: `-o` writes what standard output gets, `--endpoint` posts it; a trace the
    /// stream cannot take (calls decoded out of order) and a `$TMPDIR` where no spool can be made
    /// each still give the view's bytes, from a whole profile.
    func testCommandWritesFilesAndFallsBackToTheView() throws {
        var options = ViewOptions()
        options.hostName = try hostName()
        options.version = try XCTUnwrap(try calltrace(["--version"]).stdout.split(separator: " ").last)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for (name, bytes) in [("gaps", gaps()), ("out-of-order", OutOfOrderTrace.bytes)] {
            let url = Workspace.directory("synthetic").appendingPathComponent("otlp-cli-\(name).trace")
            try Data(bytes).write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            let view = OTLPExport.text(ViewInput([try syntheticProfile(bytes, lines: true)]), options: options)
            let standard = try calltrace(["export", url.path, "--format", "otlp"])
            XCTAssertEqual(standard.status, 0, standard.description)
            XCTAssertEqual(standard.stdout, view, name)
            let out = url.deletingPathExtension().appendingPathExtension("otlp.jsonl")
            defer { try? FileManager.default.removeItem(at: out) }
            let file = try calltrace(["export", url.path, "--format", "otlp", "-o", out.path])
            XCTAssertEqual(file.status, 0, file.description)
            XCTAssertEqual(file.stdout, "", name)
            XCTAssertEqual(try String(contentsOf: out, encoding: .utf8), view, name)
            let noSpool = try calltrace(["export", url.path, "--format", "otlp"], environment: ["TMPDIR": "/nonexistent/calltrace"])
            XCTAssertEqual(noSpool.status, 0, noSpool.description)
            XCTAssertEqual(noSpool.stdout, view, name)
            // Posted: the bodies are the view's lines, and nothing goes to standard output.
            let receiver = try OTLPExportTests.Receiver(.accept)
            defer { receiver.stop() }
            let posted = try calltrace(["export", url.path, "--format", "otlp", "--endpoint", "http://127.0.0.1:\(receiver.port)"])
            XCTAssertEqual(posted.status, 0, posted.description)
            XCTAssertEqual(posted.stdout, "", name)
            XCTAssertEqual(try receiver.received().map { $0.body + "\n" }.joined(), view, name)
        }
    }

    /// Many threads of a few calls each (a thread per request): the stream's memory per thread is
    /// about a whole profile's (each thread's records wait in a buffer that grows with them, not
    /// one sized for a chunk up front: 40 KiB a thread, a page or two of it touched).
    func testManyThreadsCostLittleMemoryEach() throws {
        func peak(threads: Int) throws -> Int {
            var trace = T()
            var metadata: [UInt8] = []
            var seq: UInt64 = 0
            for index in 0..<threads {
                var calls = T.Calls()
                let stream = UInt32(index + 1)
                let tid = 10_000 + UInt64(index)
                trace.blocks.append(.init(stream: stream, tid: tid, seq: 0,
                                          payload: calls.call(function: 0x1000, start: UInt64(index) * 100, duration: 50, depth: 0)))
                let record = T.thread(stream: stream, tid: tid, name: "worker")
                if metadata.count + record.count > 3000 {
                    trace.blocks.append(.init(stream: 0, tid: 0, seq: seq, payload: metadata))
                    seq += 1
                    metadata = []
                }
                metadata += record
            }
            trace.blocks.append(.init(stream: 0, tid: 0, seq: seq, payload: metadata))
            let url = try trace.write(named: "otlp-threads-\(threads).trace")
            defer { try? FileManager.default.removeItem(at: url) }
            return try PeakMemory.of(["export", url.path, "--format", "otlp", "-o", "/dev/null"]).kilobytes
        }
        let few = try peak(threads: 1_000)
        let many = try peak(threads: 9_000)
        // A whole profile (export --format chrome) takes about 1 KiB a thread here.
        XCTAssertLessThan(Double(many - few) / 8_000, 3, "peak RSS \(few) KiB for 1,000 threads, \(many) KiB for 9,000")
    }

    /// Calls whose times poke out of their parent's (a damaged trace's; real ones by a nanosecond)
    /// are moved inside it, a moved parent's children inside it as moved, on both paths.
    func testCallsOutOfTheirParentAreMovedInsideIt() throws {
        var calls = T.Calls()
        let main = calls.call(function: 0x4000, start: 50 * ms, duration: 30 * ms, depth: 3)
            + calls.call(function: 0x5000, start: 65 * ms, duration: 3 * ms, depth: 3)
            + calls.call(function: 0x3000, start: 10 * ms, duration: 60 * ms, depth: 2)
            + calls.call(function: 0x2000, start: 5 * ms, duration: 55 * ms, depth: 1)
            + calls.call(function: 0x1000, start: 0, duration: 100 * ms, depth: 0)
        let bytes = mainThreadOnly(main)
        let view = try viewText(OTLPExport.self, bytes)
        XCTAssertEqual(try shape(view).spans, [
            "app under - [0, 100)",
            "0x1000 under app@0 [0, 100)",
            "0x2000 under 0x1000@0 [5, 60)",
            "0x3000 under 0x2000@5 [10, 60)",
            "0x5000 under 0x3000@10 [60, 60)",
            "0x4000 under 0x3000@10 [50, 60)",
        ].map { $0.replacingOccurrences(of: "app", with: "pid 4242") })
        XCTAssertEqual(try streamedOTLP(bytes, spansPerRequest: OTLPExport.spansPerRequest), view)
    }

    /// A trace the stream cannot take is rendered from a whole profile, whose memory per call the
    /// view should not add to: 0.8 M calls (0.2 M of them parents) take at most 1.2 times the
    /// peak memory more than 0.2 M do that `export --format chrome` takes (each rendered from a
    /// profile; OTLP kept each call's span as placed, 16 bytes a call, 57 bytes a call in all
    /// against chrome's 40).
    func testViewFromAProfileAddsNoMemoryPerCall() throws {
        func trace(calls count: Int) throws -> URL {
            var trace = T()
            var payload: [UInt8] = []
            var calls = T.Calls()
            // A call at depth 2 before the first parent, which adopts a part of its run: the
            // stream asks for the profile.
            var all = [(UInt64(0), UInt64(2), Int64(2))]
            for index in 0..<count {
                all.append((UInt64(index) * 100 + 10, 20, 2))
                if index % 4 == 3 { all.append((UInt64(index - 3) * 100 + 5, 390, 1)) }
            }
            for (start, duration, depth) in all {
                var bytes = calls.call(function: 0x1000, start: start, duration: duration, depth: depth)
                if payload.count + bytes.count > 4000 {
                    trace.blocks.append(.init(stream: 1, tid: 4242, seq: UInt64(trace.blocks.count), payload: payload))
                    calls.reset()
                    bytes = calls.call(function: 0x1000, start: start, duration: duration, depth: depth)
                    payload = []
                }
                payload += bytes
            }
            trace.blocks.append(.init(stream: 1, tid: 4242, seq: UInt64(trace.blocks.count), payload: payload))
            if count < 1000 { XCTAssertNil(try streamedOTLP(trace.bytes, spansPerRequest: OTLPExport.spansPerRequest)) }
            return try trace.write(named: "otlp-profile-\(count).trace")
        }
        func peak(_ url: URL, format: String) throws -> Int {
            try PeakMemory.of(["export", url.path, "--format", format, "-o", "/dev/null"]).kilobytes
        }
        _ = try trace(calls: 100)
        let small = try trace(calls: 200_000)
        let large = try trace(calls: 800_000)
        defer { for url in [small, large] { try? FileManager.default.removeItem(at: url) } }
        let otlp = try peak(large, format: "otlp") - peak(small, format: "otlp")
        let chrome = try peak(large, format: "chrome") - peak(small, format: "chrome")
        XCTAssertLessThan(Double(otlp), 1.2 * Double(chrome), "peak RSS growth: otlp \(otlp) KiB, chrome \(chrome) KiB")
    }

    private func hostName() throws -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { throw TestFailure("gethostname failed") }
        return String(cString: name)
    }
}

/// A fixed-seed generator (splitmix64), so random programs are the same on every run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: UInt64) -> UInt64 { next() % bound }
    mutating func chance(_ percent: UInt64) -> Bool { below(100) < percent }
}

/// A synthetic trace of a random program: per thread a forest of calls (times in ticks, which
/// are nanoseconds), each recorded or left out at random, written in exit order with the
/// innermost open calls last as unfinished; blocks of the threads interleaved; random marks.
private struct RandomProgram {
    var trace = SyntheticTrace()

    private struct Call {
        var function: UInt64
        var start: UInt64
        var end: UInt64
        var depth: Int64
        var recorded: Bool
        /// Never recorded: a caller leaves out all its callees, one or two levels of them (depth
        /// gaps; never calls that leave out and record at one depth under one caller, which make
        /// runs a call adopts a part of).
        var hidden = false
        var hiddenLevels = 0
        var flags: UInt8
        var descendants: UInt64
    }

    init(random: inout SplitMix, threads: Int, callsPerThread: UInt64, zeroEntry: UInt64, zeroExit: UInt64,
         threshold: UInt64, muted: Set<UInt64>, gaps: UInt64) {
        var streams: [[[UInt8]]] = [] // per thread, its blocks' payloads
        var boundaries: [UInt64] = []
        var metadata = [SyntheticTrace.process(executable: "/usr/bin/app", arguments: ["app"])]
        var tids: [UInt64] = []
        let traceEnd: UInt64 = 50_000_000
        for index in 0..<threads {
            // Threads 2 and 3 share a tid (a tid used again).
            let tid: UInt64 = index == 3 ? 4244 : 4242 + UInt64(index)
            tids.append(tid)
            metadata.append(SyntheticTrace.thread(stream: UInt32(index + 1), tid: tid, name: "t\(index)"))
            var written: [Call] = []
            var open: [Call] = []
            var clock: UInt64 = random.below(3) * 1000
            var made: UInt64 = 0
            // Depth-first: enter or leave at random until enough calls, then leave some open.
            while made < callsPerThread || (!open.isEmpty && random.chance(70)) {
                let enter = open.count < 2 || (open.count < 30 && random.chance(made < callsPerThread ? 52 : 0))
                if enter && made < callsPerThread {
                    let depth = Int64(open.count)
                    var call = Call(function: 0x1000 * (1 + random.below(12)), start: clock, end: 0, depth: depth,
                                    recorded: true, flags: random.chance(3) ? TraceFormat.CallFlag.unwound : 0,
                                    descendants: random.chance(20) ? random.below(4) : 0)
                    let callerLevels = open.last?.hiddenLevels ?? 0
                    call.hidden = callerLevels > 0
                    call.hiddenLevels = call.hidden ? callerLevels - 1 : random.chance(gaps) ? 1 + Int(random.below(2)) : 0
                    open.append(call)
                    made += 1
                    // Zero ticks between entries sometimes: a child starting on its parent's tick.
                    clock += random.chance(zeroEntry) ? 0 : 1 + random.below(50)
                } else if var call = open.popLast() {
                    call.end = clock
                    // Recorded when not muted and as long as the threshold (so a recorded call's
                    // caller is recorded unless muted: muting makes the depth gaps).
                    call.recorded = !call.hidden && !muted.contains(call.function) && call.end - call.start >= threshold
                    if call.recorded { written.append(call) }
                    boundaries += [call.start, call.end]
                    clock += random.chance(zeroExit) ? 0 : 1 + random.below(50)
                }
            }
            // What is still open ends with the trace: innermost first.
            for var call in open.reversed() where !call.hidden && !muted.contains(call.function) {
                call.end = max(traceEnd, clock)
                call.flags = TraceFormat.CallFlag.unfinished
                written.append(call)
            }
            var blocks: [[UInt8]] = []
            var payload: [UInt8] = []
            var calls = SyntheticTrace.Calls()
            for call in written {
                let bytes = calls.call(function: call.function, start: call.start, duration: call.end - call.start,
                                       depth: call.depth, flags: call.flags, descendants: call.descendants)
                if payload.count + bytes.count > 3000 {
                    blocks.append(payload)
                    payload = []
                    calls.reset()
                    payload = calls.call(function: call.function, start: call.start, duration: call.end - call.start,
                                         depth: call.depth, flags: call.flags, descendants: call.descendants)
                } else {
                    payload += bytes
                }
            }
            if !payload.isEmpty { blocks.append(payload) }
            streams.append(blocks)
        }
        metadata.append(SyntheticTrace.thread(stream: 60, tid: 7777, name: "idle"))
        // Marks: on call boundaries, between them, and on a thread with no calls.
        for _ in 0..<(1 + random.below(40)) {
            let thread = Int(random.below(UInt64(tids.count)))
            // Of no thread, of a thread with an empty block (shown, with no calls), or a caller's.
            let orphan = random.chance(10)
            let idle = random.chance(10)
            let tick = boundaries.isEmpty || random.chance(40) ? random.below(200_000)
                : boundaries[Int(random.below(UInt64(boundaries.count)))]
            metadata.append(SyntheticTrace.mark("m\(tick)", tick: tick, tid: orphan ? 9999 : idle ? 7777 : tids[thread],
                                                stream: orphan ? 99 : idle ? 60 : UInt64(thread + 1)))
        }
        trace.overheadPairTicks = 2
        trace.overheadOwnTicks = 1
        // Blocks interleaved: round robin over the threads, a random number at a time.
        var next = [Int](repeating: 0, count: streams.count)
        var blocks: [SyntheticTrace.Block] = []
        while next.enumerated().contains(where: { $0.element < streams[$0.offset].count }) {
            for (index, stream) in streams.enumerated() {
                for _ in 0..<(1 + random.below(3)) where next[index] < stream.count {
                    blocks.append(.init(stream: UInt32(index + 1), tid: tids[index], seq: UInt64(next[index]),
                                        payload: stream[next[index]]))
                    next[index] += 1
                }
            }
        }
        var payload: [UInt8] = []
        var seq: UInt64 = 0
        for record in metadata {
            if payload.count + record.count > 3000 {
                blocks.append(.init(stream: 0, tid: 0, seq: seq, payload: payload))
                seq += 1
                payload = []
            }
            payload += record
        }
        blocks.append(.init(stream: 0, tid: 0, seq: seq, payload: payload))
        blocks.append(.init(stream: 60, tid: 7777, seq: 0, payload: []))
        trace.blocks = blocks
    }
}
