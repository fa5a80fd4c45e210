@testable import CalltraceKit
import Foundation
import XCTest

/// Spans and calltrace_mark_at (CShims/include/calltrace.h, docs/trace-format.md SPAN_BEGIN,
/// SPAN_POINT, SPAN_END, MARK_AT): what a program records reaches `Trace.spanEvents` and
/// `Profile.spans` paired by id, across threads, nested and overlapping, from a constructor, never
/// ended; a fork child has none of its parent's spans; a plain build runs and gets 0 ids. Then the
/// `spans` view: golden text and JSON on a small synthetic trace, and the command on real and
/// empty traces. Fixture: spans.c.
final class SpanTests: XCTestCase {
    private typealias T = SyntheticTrace
    private let ms: UInt64 = 1_000_000

    private func printed(_ key: String, in stdout: String) -> [UInt64] {
        guard let line = stdout.split(separator: "\n").first(where: { $0.hasPrefix(key + " ") }) else { return [] }
        return line.dropFirst(key.count + 1).split(separator: " ").compactMap { UInt64($0) }
    }

    private func profile(of url: URL) throws -> Profile {
        try ProfileBuilder.read(path: FilePath(url.path)) { Symbolicator(modules: $0, lines: false, warn: { _ in }) }.1
    }

    private func describe(_ spans: [ProfileSpan]) -> String {
        spans.map { span in
            "\(span.name) \(span.begin)..\(span.end.map(\.description) ?? "nil") tid \(span.beginTid)->\(span.endTid.map(String.init) ?? "nil") "
                + span.milestones.map { "\($0.name)@\($0.at)" }.joined(separator: ",")
        }.joined(separator: "\n")
    }

    // MARK: - The runtime

    func testSpansAcrossThreadsNestedOverlappingUnfinishedAndFromAConstructor() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["spans.c"], compiler: compiler)
            let (result, url) = try fixture.run()
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let mainTid = try XCTUnwrap(printed("main_tid", in: result.stdout).first, result.description)
            let workerTid = try XCTUnwrap(printed("worker_tid", in: result.stdout).first, result.description)
            let ids = printed("ids", in: result.stdout)
            XCTAssertEqual(ids.count, 6, result.description)
            XCTAssertFalse(ids.contains(0), "every begin recorded: \(ids)")
            XCTAssertEqual(Set(ids).count, ids.count, "ids are unique: \(ids)")

            let trace = try TraceReader.read(path: url.path)
            XCTAssertEqual(trace.header.lost & TraceFormat.Lost.marks, 0, "\(trace.warnings)")
            XCTAssertFalse(trace.spanEvents.contains { $0.id == 0 }, "calls given 0 record nothing")
            XCTAssertNotEqual(trace.header.mainTick, .zero)
            let startupBegin = try XCTUnwrap(trace.spanEvents.first { $0.kind == .begin && $0.name == "startup" })
            XCTAssertLessThan(startupBegin.tick, trace.header.mainTick, "begun in a constructor, before main")

            let profile = try profile(of: url)
            let spans = profile.spans
            let context = "\(compiler):\n\(describe(spans))"
            XCTAssertEqual(spans.map(\.name), ["startup", "request", "outer", "inner", "overlap", "never"], context)
            guard spans.count == 6 else { continue }
            let (startup, request, outer, inner, overlap, never) = (spans[0], spans[1], spans[2], spans[3], spans[4], spans[5])
            func ms(_ time: Nanoseconds?) -> Double { time?.milliseconds ?? -1 }

            XCTAssertGreaterThanOrEqual(ms(startup.duration), 10, context)
            XCTAssertEqual(request.extra, "id=7", context)
            XCTAssertEqual(request.beginTid, mainTid, context)
            XCTAssertEqual(request.endTid, workerTid, "ended on the worker; \(context)")
            XCTAssertEqual(request.milestones.map(\.name), ["sent", "answered"], context)
            XCTAssertEqual(request.milestones.map(\.tid), [mainTid, workerTid], context)
            XCTAssertGreaterThanOrEqual(ms(request.milestones.first.map { $0.at - request.begin }), 5, context)
            XCTAssertGreaterThanOrEqual(ms(request.duration), 15, context)
            XCTAssertGreaterThanOrEqual(ms(outer.duration), 20, context)
            XCTAssertGreaterThanOrEqual(ms(inner.duration), 5, context)
            XCTAssertGreaterThanOrEqual(ms(overlap.duration), 15, context)
            // Nested: inner inside outer. Overlapping: overlap begins inside outer and ends after it.
            if let outerEnd = outer.end, let innerEnd = inner.end, let overlapEnd = overlap.end {
                XCTAssertTrue(outer.begin <= inner.begin && innerEnd <= outerEnd, context)
                XCTAssertTrue(outer.begin < overlap.begin && overlap.begin < outerEnd && outerEnd < overlapEnd, context)
                XCTAssertGreaterThanOrEqual(ms(overlapEnd - outerEnd), 10, context)
            }
            XCTAssertTrue(never.isUnfinished, context)
            XCTAssertNil(never.endTid, context)
            XCTAssertEqual(never.milestones.map(\.name), ["halfway"], context)
            XCTAssertLessThan(ms(request.duration), 30_000, context)

            // calltrace_mark_at: at the time given, 30 ms before the mark that follows it.
            let given = try XCTUnwrap(printed("mark_at_ns", in: result.stdout).first)
            let names = trace.marks.map(\.name)
            XCTAssertEqual(names, ["sent earlier", "after mark_at"], "\(trace.marks)")
            if trace.marks.count == 2 {
                let at = trace.marks[0]
                XCTAssertEqual(at.extra, "from a library's clock")
                XCTAssertEqual(at.tid, mainTid)
                let back = trace.clock.monotonic(tick: at.tick).value
                XCTAssertLessThan(abs(back - Int64(given)), 1_000, "the tick is the time given: \(back) vs \(given)")
                let gap = trace.clock.duration(ticks: trace.marks[1].tick &- at.tick).milliseconds
                XCTAssertGreaterThanOrEqual(gap, 30, "the past time given, 30 ms before the next mark")
                XCTAssertLessThan(gap, 30_000)
                XCTAssertGreaterThan(at.tick, trace.header.mainTick, "main ran for more than 30 ms before it")
            }
        }
    }

    /// A fork child starts with none of its parent's open spans: ending one there records nothing
    /// the reader keeps; its own spans are in its own trace.
    func testForkChildHasNoneOfItsParentsSpans() throws {
        let fixture = try Fixture.build(["spans.c"], compiler: .gcc)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: fixture.directory.path)) ?? []
            where name.hasPrefix("fork-") {
            try? FileManager.default.removeItem(at: fixture.directory.appendingPathComponent(name))
        }
        let output = fixture.directory.appendingPathComponent("fork-%p.trace")
        let (result, _) = try fixture.run(["fork"], environment: ["CALLTRACE_OUTPUT": output.path])
        XCTAssertEqual(result.status, 0, result.description)
        let child = try XCTUnwrap(printed("child", in: result.stdout).first, result.description)
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path).filter { $0.hasPrefix("fork-") }
        XCTAssertEqual(names.count, 2, "\(names)")
        for name in names {
            let spans = try profile(of: fixture.directory.appendingPathComponent(name)).spans
            if name == "fork-\(child).trace" {
                XCTAssertEqual(spans.map(\.name), ["child span"], describe(spans))
                XCTAssertEqual(spans.map(\.isUnfinished), [false], describe(spans))
            } else {
                // The constructor's "startup" is never ended in this mode.
                XCTAssertEqual(spans.map(\.name), ["startup", "parent span"], describe(spans))
                XCTAssertEqual(spans.map(\.isUnfinished), [true, false], "the parent ends its span; \(describe(spans))")
            }
        }
    }

    /// exec replaces the image: a span begun before it is unfinished in the first image's trace
    /// (its milestone kept), the new image's trace starts with none of them, and ending the old id
    /// there records nothing the reader keeps. (The fixture waits for its events to reach the file
    /// before exec: those still queued then are lost, as documented.)
    func testExecLeavesTheSpansBeforeItUnfinishedAndTheNewImageStartsWithNone() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["spans.c"], compiler: compiler)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: fixture.directory.path)) ?? []
                where name.hasPrefix("exec-") {
                try? FileManager.default.removeItem(at: fixture.directory.appendingPathComponent(name))
            }
            let output = fixture.directory.appendingPathComponent("exec-%p.trace")
            let (result, _) = try fixture.run(["exec"], environment: ["CALLTRACE_OUTPUT": output.path])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let pid = try XCTUnwrap(printed("before exec", in: result.stdout).first, result.description)
            XCTAssertEqual(printed("after exec", in: result.stdout), [pid], "exec keeps the pid")
            let names = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path)
                .filter { $0.hasPrefix("exec-") }.sorted()
            XCTAssertEqual(names, ["exec-\(pid)-1.trace", "exec-\(pid).trace"], "\(compiler)")
            guard names.count == 2 else { continue }

            let first = try profile(of: fixture.directory.appendingPathComponent("exec-\(pid).trace"))
            let context = "\(compiler) before exec:\n\(describe(first.spans))"
            // The constructor's "startup" is never ended in this mode, in either image.
            XCTAssertEqual(first.spans.map(\.name), ["startup", "before exec"], context)
            XCTAssertEqual(first.spans.map(\.isUnfinished), [true, true], context)
            XCTAssertEqual(first.spans.last?.extra, "image 1", context)
            XCTAssertEqual(first.spans.last?.milestones.map(\.name), ["about to exec"], context)

            let second = try profile(of: fixture.directory.appendingPathComponent("exec-\(pid)-1.trace"))
            let secondContext = "\(compiler) after exec:\n\(describe(second.spans))"
            XCTAssertEqual(second.spans.map(\.name), ["startup", "after exec"], secondContext)
            XCTAssertEqual(second.spans.map(\.isUnfinished), [true, false], "the old id ends nothing; \(secondContext)")
            XCTAssertGreaterThanOrEqual(second.spans.last?.duration?.milliseconds ?? -1, 2, secondContext)
            XCTAssertLessThan(second.spans.last?.duration?.milliseconds ?? .infinity, 30_000, secondContext)
        }
    }

    /// Without the runtime the header's span calls compile, link and return 0.
    func testPlainBuildWithoutTheRuntimeGetsZeroIds() throws {
        let include = Workspace.packageRoot.appendingPathComponent("CShims/include").path
        for compiler in ["gcc", "clang"] {
            let directory = Workspace.directory("spans-plain-\(compiler)")
            let binary = directory.appendingPathComponent("plain")
            let compiled = try Command.run(try which(compiler),
                                           ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-I", include,
                                            Workspace.fixtures.appendingPathComponent("spans.c").path,
                                            "-o", binary.path, "-lpthread"])
            XCTAssertEqual(compiled.status, 0, "\(compiler): \(compiled)")
            let nm = try Command.run(try which("nm"), ["-D", binary.path])
            XCTAssertFalse(nm.stdout.split(separator: "\n").contains { $0.contains("calltrace_rt") && !$0.contains(" w ") },
                           "only weak references to the runtime: \(nm.stdout)")
            let trace = directory.appendingPathComponent("none.trace")
            let run = try Command.run(binary.path, [], environment: ["CALLTRACE_OUTPUT": trace.path])
            XCTAssertEqual(run.status, 0, "\(compiler): \(run)")
            XCTAssertEqual(printed("ids", in: run.stdout), [0, 0, 0, 0, 0, 0], run.description)
            XCTAssertFalse(FileManager.default.fileExists(atPath: trace.path))
        }
    }

    /// The cost of one begin and its end while recording, in rounds the drain thread keeps up
    /// with; printed for the record, bounded loosely.
    func testSpanCallsAreCheap() throws {
        let fixture = try Fixture.build(["spans.c"], compiler: .gcc)
        let (result, url) = try fixture.run(["cost", "51200"])
        XCTAssertEqual(result.status, 0, result.description)
        let line = try XCTUnwrap(result.stdout.split(separator: "\n").first { $0.hasPrefix("span_ns ") }, result.description)
        let cost = try XCTUnwrap(Double(line.dropFirst("span_ns ".count)))
        print("calltrace_span_begin + calltrace_span_end: \(cost) ns")
        XCTAssertLessThan(cost, 20_000, "a begin and an end cost about two marks")
        let profile = try profile(of: url)
        let trace = try TraceReader.read(path: url.path)
        if trace.header.lost & TraceFormat.Lost.marks == 0 {
            XCTAssertEqual(profile.spans.filter { $0.name == "cost" && !$0.isUnfinished }.count, 51200)
        }
    }

    // MARK: - The reader

    func testMarkAtIsPlacedAtTheTimeGivenAndOrphanEventsAreLeftOut() throws {
        var trace = T()
        trace.blocks = [.init(stream: 0, tid: 0, seq: 0, payload:
            T.mark("later", tick: 50 * ms)
            + T.markAt("earlier", extra: "x", tick: 60 * ms, ns: 20 * ms)
            + T.spanEnd(9, tick: 10 * ms) + T.spanPoint(9, "orphan", tick: 10 * ms)
            + T.spanBegin(1, "a", tick: 30 * ms) + T.spanEnd(1, tick: 40 * ms) + T.spanEnd(1, tick: 45 * ms)
            + T.spanPoint(1, "after the end", tick: 46 * ms))]
        let read = try TraceReader.read(bytes: trace.bytes)
        XCTAssertEqual(read.marks.map(\.name), ["earlier", "later"])
        XCTAssertEqual(read.marks.map(\.tick), [Ticks(20 * ms), Ticks(50 * ms)])
        let spans = try syntheticProfile(trace.bytes).spans
        XCTAssertEqual(spans.count, 1, describe(spans))
        XCTAssertEqual(spans.first?.duration, Nanoseconds(10 * Int64(ms)), describe(spans))
        XCTAssertEqual(spans.first?.milestones.map(\.name), [], describe(spans))
    }

    // MARK: - The view

    /// main 0x1000 (0-100 ms) with 0x2000 (10-40, with a child 0x2100 12-30) and 0x3000 (50-90) on
    /// thread 4242; 0x4000 (20-35) on the worker 4243. Spans: "open document" 5-45 ms (begun on the
    /// main thread, ended on the worker, milestones "parsed" at 15, "laid out" at 38), "request"
    /// 20-30 on the worker, "open document" 48-68 ("parsed" at 52), "open document" from 70 never
    /// ended; an end without a begin. Frames at 0, 16.67, 33.33 (a 50 ms frame: 2 dropped), 83.33;
    /// a hang at 60 ms in 0x3000. The runtime started at tick 0, the program ended at 100 ms.
    fileprivate func spansProfile() throws -> Profile {
        var main = T.Calls()
        let mainCalls = [
            main.call(function: 0x2100, start: 12 * ms, duration: 18 * ms, depth: 2),
            main.call(function: 0x2000, start: 10 * ms, duration: 30 * ms, depth: 1),
            main.call(function: 0x3000, start: 50 * ms, duration: 40 * ms, depth: 1),
            main.call(function: 0x1000, start: 0, duration: 100 * ms, depth: 0),
        ]
        var worker = T.Calls()
        let workerCalls = [worker.call(function: 0x4000, start: 20 * ms, duration: 15 * ms, depth: 0)]
        var hang: [UInt8] = []
        for value in [1, 4242, 60 * ms, 50 * ms, 0x3000, 1, 20 * ms, 0, 1, 0x3010] { hang += T.varint(value) }
        let metadata = T.process(executable: "/bin/app", arguments: ["app"])
            + T.thread(stream: 1, tid: 4242, name: "app") + T.thread(stream: 2, tid: 4243, name: "worker")
            + T.spanBegin(1, "open document", extra: "path=a.txt", tick: 5 * ms)
            + T.spanPoint(1, "parsed", tick: 15 * ms)
            + T.spanBegin(2, "request", tick: 20 * ms, tid: 4243, stream: 2)
            + T.spanEnd(2, tick: 30 * ms, tid: 4243, stream: 2)
            + T.spanPoint(1, "laid out", tick: 38 * ms, tid: 4243, stream: 2)
            + T.spanEnd(1, tick: 45 * ms, tid: 4243, stream: 2)
            + T.spanBegin(3, "open document", tick: 48 * ms)
            + T.spanEnd(9, tick: 50 * ms)
            + T.spanPoint(3, "parsed", tick: 52 * ms)
            + T.spanEnd(3, tick: 68 * ms)
            + T.spanBegin(4, "open document", tick: 70 * ms)
            + T.frames(at: [0, 16_666_667, 33_333_333, 83_333_333])
            + T.sized(TraceFormat.Tag.hang, hang)
        var trace = T()
        trace.endTick = 100 * ms
        trace.blocks = [.init(stream: 0, tid: 0, seq: 0, payload: metadata),
                        .init(stream: 1, tid: 4242, seq: 0, payload: mainCalls.flatMap { $0 }),
                        .init(stream: 2, tid: 4243, seq: 0, payload: workerCalls.flatMap { $0 })]
        return try syntheticProfile(trace.bytes)
    }

    func testSpansTextShowsPercentilesMilestonesAndTheSlowestWithWhatRanInside() throws {
        let profile = try spansProfile()
        XCTAssertEqual(SpansTextView.text(ViewInput([profile])), """
            spans in 1 run: 2 names, 3 ended, 1 unfinished; times in ms
               count  unfinished        p50        p90        p99        max  span
                   2           1      20.00      40.00      40.00      40.00  open document
                   1           0      10.00      10.00      10.00      10.00  request

            open document: milestones, from the span's begin
                    p50        p90  spans  milestone
                   4.00      10.00      2  parsed
                  33.00      33.00      1  laid out
            open document: the 2 slowest
              40.00 ms  begun at 5.00 ms on thread 4242, ended on thread 4243  "path=a.txt"
                milestones: parsed +10.00 ms, laid out +33.00 ms
                calls:     30.00 ms  at +5.00 ms  0x2000  (thread 4242)
                           15.00 ms  at +15.00 ms  0x4000  (thread 4243)
                dropped frames: 2
              20.00 ms  begun at 48.00 ms on thread 4242, ended there
                milestones: parsed +4.00 ms
                calls:     40.00 ms  at +2.00 ms  0x3000  (thread 4242)
                hang at +12.00 ms in 0x3000, since +2.00 ms
            open document: 1 unfinished, not in the percentiles
              begun at 70.00 ms on thread 4242, open for 30.00 ms when the trace ended

            request: the 1 slowest
              10.00 ms  begun at 20.00 ms on thread 4243, ended there
                calls:     15.00 ms  at +0.00 ms  0x4000  (thread 4243)

            """)
    }

    func testSpansJSONHasEveryField() throws {
        let profile = try spansProfile()
        var options = ViewOptions()
        options.limit = 1
        let text = SpansJSONView.text(ViewInput([profile]), options: options)
        XCTAssertEqual(text, """
            {"runs":1,"spans":[{"name":"open document","count":2,"unfinished":1,"p50_ms":20.000000,"p90_ms":40.000000,\
            "p99_ms":40.000000,"max_ms":40.000000,"milestones":[{"name":"parsed","count":2,"p50_ms":4.000000,"p90_ms":10.000000},\
            {"name":"laid out","count":1,"p50_ms":33.000000,"p90_ms":33.000000}],"slowest":[{"trace":"","extra":"path=a.txt",\
            "begin_ms":5.000000,"duration_ms":40.000000,"open_for_ms":null,"begin_tid":4242,"end_tid":4243,\
            "milestones":[{"name":"parsed","offset_ms":10.000000},{"name":"laid out","offset_ms":33.000000}],\
            "calls":[{"function":"0x2000","tid":4242,"offset_ms":5.000000,"cost_ms":30.000000},\
            {"function":"0x4000","tid":4243,"offset_ms":15.000000,"cost_ms":15.000000}],"dropped_frames":2,"hangs":[]}],\
            "unfinished_spans":[{"trace":"","extra":"","begin_ms":70.000000,"duration_ms":null,"open_for_ms":30.000000,\
            "begin_tid":4242,"end_tid":null,"milestones":[],"calls":[],"dropped_frames":0,"hangs":[]}]},\
            {"name":"request","count":1,"unfinished":0,"p50_ms":10.000000,"p90_ms":10.000000,"p99_ms":10.000000,\
            "max_ms":10.000000,"milestones":[],"slowest":[{"trace":"","extra":"","begin_ms":20.000000,"duration_ms":10.000000,\
            "open_for_ms":null,"begin_tid":4243,"end_tid":4243,"milestones":[],"calls":[{"function":"0x4000","tid":4243,\
            "offset_ms":0.000000,"cost_ms":15.000000}],"dropped_frames":0,"hangs":[]}],"unfinished_spans":[]}]}

            """)
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(text.utf8)))
    }

    /// Over several runs the percentiles are of every run's spans (nearest rank), and the slowest
    /// are the slowest of all runs, at most `--worst` a name.
    func testSeveralRunsPoolTheirSpans() throws {
        let profile = try spansProfile()
        var other = profile
        other.source = "b.trace"
        for index in other.spans.indices where other.spans[index].end != nil {
            other.spans[index].end = other.spans[index].begin + Nanoseconds(Int64(index + 1) * 100 * Int64(ms))
        }
        let statistics = SpanStatistics([profile, other], limit: 2)
        XCTAssertEqual(statistics.runs, 2)
        let open = try XCTUnwrap(statistics.rows.first { $0.name == "open document" })
        XCTAssertEqual(open.count, 4)
        XCTAssertEqual(open.unfinished, 2)
        XCTAssertEqual(open.durations, [20, 40, 100, 300].map { $0 * Int64(ms) })
        XCTAssertEqual(open.percentile(50), Nanoseconds(40 * Int64(ms)))
        XCTAssertEqual(open.percentile(90), Nanoseconds(300 * Int64(ms)))
        XCTAssertEqual(open.worst.map(\.duration), [300, 100].map { Nanoseconds($0 * Int64(ms)) })
        XCTAssertEqual(open.worst.map(\.source), ["b.trace", "b.trace"])
        XCTAssertEqual(open.unfinishedInstances.count, 2)
    }

    /// `hitches` and `hangs` name the spans open during a hitch or when a hang was captured, in
    /// text and JSON; the report's tree and JSON, which show the same hang, do not.
    func testHitchesAndHangsNameTheSpansTheyFallIn() throws {
        let profile = try spansProfile()
        let hitches = HitchesTextView.text(ViewInput([profile]))
        XCTAssertTrue(hitches.contains("""
                  in spans: open document (5.00-45.00 ms, "path=a.txt"), open document (48.00-68.00 ms), \
            open document (70.00 ms-, unfinished)

            """), hitches)
        let hitchesJSON = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(HitchesJSONView.text(ViewInput([profile])).utf8))
                                        as? [String: Any])
        let hitch = try XCTUnwrap((hitchesJSON["hitches"] as? [[String: Any]])?.first)
        let hitchSpans = try XCTUnwrap(hitch["spans"] as? [[String: Any]])
        XCTAssertEqual(hitchSpans.map { $0["name"] as? String }, Array(repeating: "open document", count: 3))
        XCTAssertEqual(hitchSpans.map { $0["begin_ms"] as? Double }, [5, 48, 70])
        XCTAssertEqual(hitchSpans.map { $0["end_ms"] as? Double }, [45, 68, nil])
        XCTAssertTrue(hitchSpans[2]["end_ms"] is NSNull, "unfinished: null")
        XCTAssertEqual(hitchSpans.map { $0["extra"] as? String }, ["path=a.txt", "", ""])

        let hangs = HangsTextView.text(ViewInput([profile]))
        XCTAssertTrue(hangs.hasSuffix("\nin spans: open document (48.00-68.00 ms)\n"), "captured at 60 ms: \(hangs)")
        let hangsJSON = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(HangsJSONView.text(ViewInput([profile])).utf8))
                                      as? [String: Any])
        let hang = try XCTUnwrap((hangsJSON["hangs"] as? [[String: Any]])?.first)
        XCTAssertEqual((hang["spans"] as? [[String: Any]])?.map { "\($0["name"] ?? "") \($0["begin_ms"] ?? "")" },
                       ["open document 48.0"])
        XCTAssertFalse(ReportTreeView.text(ViewInput([profile])).contains("in spans"), "the report is unchanged")
        XCTAssertFalse(ReportJSONView.text(ViewInput([profile])).contains("\"spans\":[{"), "the report is unchanged")

        var plain = profile
        plain.spans = []
        XCTAssertFalse(HitchesTextView.text(ViewInput([plain])).contains("in spans"))
        XCTAssertFalse(HangsTextView.text(ViewInput([plain])).contains("in spans"))
        XCTAssertTrue(HangsJSONView.text(ViewInput([plain])).contains("\"spans\":[]"), "the field is always there")
    }

    func testAProfileWithoutSpansSaysSo() throws {
        let empty = try SyntheticRuns.profile(SyntheticRuns.base)
        XCTAssertEqual(SpansTextView.text(ViewInput([empty])),
                       "no spans in 1 run: the program never called calltrace_span_begin() (see calltrace.h)\n")
        XCTAssertEqual(SpansJSONView.text(ViewInput([empty])), "{\"runs\":1,\"spans\":[]}\n")
    }

    // MARK: - The command

    func testSpansCommandReadsRealTracesAndDirectories() throws {
        let fixture = try Fixture.build(["spans.c"], compiler: .gcc)
        let (result, url) = try fixture.run(environment: ["CALLTRACE_THREADS": "all"])
        XCTAssertEqual(result.status, 0, result.description)
        let text = try calltrace(["spans", url.path])
        XCTAssertEqual(text.status, 0, text.description)
        XCTAssertTrue(text.stdout.hasPrefix("spans in 1 run: 6 names, 5 ended, 1 unfinished; times in ms\n"), text.stdout)
        XCTAssertTrue(text.stdout.contains("never: 1 unfinished, not in the percentiles"), text.stdout)
        XCTAssertTrue(text.stdout.contains("  worker  (thread \(try XCTUnwrap(printed("worker_tid", in: result.stdout).first)))"),
                      "the worker's call inside request: \(text.stdout)")
        let info = try calltrace(["info", url.path])
        XCTAssertTrue(info.stdout.contains("spans:") && info.stdout.contains("6 begun, 5 ended"), info.stdout)
        let directory = Workspace.directory("spans-directory")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        try FileManager.default.copyItem(at: url, to: directory.appendingPathComponent("a.trace"))
        let json = try calltrace(["spans", directory.path, "--format", "json", "--worst", "1"])
        XCTAssertEqual(json.status, 0, json.description)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((document["spans"] as? [[String: Any]])?.compactMap { $0["name"] as? String }.sorted(),
                       ["inner", "never", "outer", "overlap", "request", "startup"])

        let plain = try Fixture.build(["nested.c"], compiler: .gcc)
        let (plainResult, plainURL) = try plain.run()
        XCTAssertEqual(plainResult.status, 0, plainResult.description)
        let none = try calltrace(["spans", plainURL.path])
        XCTAssertEqual(none.status, 0, none.description)
        XCTAssertEqual(none.stdout, "no spans in 1 run: the program never called calltrace_span_begin() (see calltrace.h)\n")

        let bad = try calltrace(["spans", url.path, "--worst", "0"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("--worst 0"), bad.stderr)
        let missing = try calltrace(["spans", fixture.directory.appendingPathComponent("missing.trace").path])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertEqual(missing.stderr.split(separator: "\n").count, 1, missing.stderr)
    }
}

extension SpanTests {
    func testTimelineShowsSpansAsIntervalsAmongItsPoints() throws {
        let profile = try spansProfile()
        XCTAssertEqual(TimelineTextView.text(ViewInput([profile])), """
            timeline of app (pid 4242): times since runtime start (the process's start is unknown)
               0.00 ms               runtime start
                                          0.00 ms   100.00 ms  0x1000
               5.00 ms     +5.00 ms  span "open document" begins path=a.txt (40.00 ms)
                                         10.00 ms    30.00 ms  0x2000
              20.00 ms    +15.00 ms  span "request" begins (10.00 ms) (thread 4243)
              30.00 ms    +10.00 ms  span "request" ends (thread 4243)
              45.00 ms    +15.00 ms  span "open document" ends (thread 4243)
              48.00 ms     +3.00 ms  span "open document" begins (20.00 ms)
                                         50.00 ms    40.00 ms  0x3000
              68.00 ms    +20.00 ms  span "open document" ends
              70.00 ms     +2.00 ms  span "open document" begins (unfinished)
             100.00 ms    +30.00 ms  exit
            note: the trace does not say when main was entered: no phases

            """)
        let json = TimelineJSONView.text(ViewInput([profile]))
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let points = try XCTUnwrap(document["points"] as? [[String: Any]])
        XCTAssertEqual(points.compactMap { $0["kind"] as? String },
                       ["runtime_start", "span_begin", "span_begin", "span_end", "span_end", "span_begin", "span_end",
                        "span_begin", "end"])
        XCTAssertTrue(json.contains(#"{"kind":"span_begin","name":"open document","extra":"path=a.txt","at_ms":5.000000,"#
                                    + #""since_previous_ms":5.000000,"duration_ms":40.000000,"thread":4242,"#), json)
        XCTAssertTrue(json.contains(#""kind":"span_begin","name":"open document","at_ms":70.000000,"#
                                    + #""since_previous_ms":2.000000,"duration_ms":null,"thread":4242,"#), json)
        XCTAssertTrue(json.contains(#"{"kind":"span_end","name":"open document","at_ms":45.000000,"#
                                    + #""since_previous_ms":15.000000,"thread":4243,"calls":[]}"#), json)
    }
}

extension SpanTests {
    /// The calls listed inside a span (a walk down the call tree) are those a scan of every call
    /// finds: the outermost recorded calls on its threads that began inside it.
    func testCallsInsideASpanMatchAScanOfEveryCall() throws {
        let fixture = try Fixture.build(["spans.c"], compiler: .clang)
        let (result, url) = try fixture.run(environment: ["CALLTRACE_THREADS": "all", "CALLTRACE_THRESHOLD": "0"],
                                            traceName: "all")
        XCTAssertEqual(result.status, 0, result.description)
        let profile = try profile(of: url)
        XCTAssertGreaterThanOrEqual(profile.callCount, 9, "threshold 0 records every call")
        let statistics = SpanStatistics([profile], limit: 100)
        var compared = 0
        for row in statistics.rows {
            for instance in row.worst + row.unfinishedInstances {
                guard let end = instance.duration.map({ instance.begin + $0 }) ?? profile.ended else { continue }
                var expected: [(String, UInt64, Int64, Int64)] = []
                for tid in Set([instance.beginTid] + (instance.endTid.map { [$0] } ?? [])) {
                    guard let thread = profile.threads.first(where: { $0.tid == tid }) else { continue }
                    func inside(_ call: Int) -> Bool { thread.start(call) >= instance.begin && thread.start(call) < end }
                    for call in 0..<thread.count where inside(call) {
                        let parent = Int(thread.parent[call])
                        if parent >= 0 && inside(parent) { continue }
                        expected.append((profile.functions[Int(thread.function[call])].name, tid,
                                         (thread.start(call) - instance.begin).value, thread.cost(call).value))
                    }
                }
                expected.sort { $0.3 != $1.3 ? $0.3 > $1.3 : $0.2 < $1.2 }
                let slowest = expected.prefix(SpanStatistics.callsPerInstance)
                XCTAssertEqual(instance.calls.map { "\($0.function) \($0.tid) \($0.start.value) \($0.cost.value)" },
                               slowest.map { "\($0.0) \($0.1) \($0.2) \($0.3)" }, row.name)
                compared += 1
            }
        }
        XCTAssertEqual(compared, 6, "every span compared")
    }
}
