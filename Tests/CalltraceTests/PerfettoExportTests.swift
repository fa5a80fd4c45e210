@testable import CalltraceKit
import Foundation
import XCTest

/// `export --format perfetto`, read back with Perfetto's official protos (PerfettoTraceSummary):
/// on a synthetic trace whose every slice, mark, frame and hang is known, and on a real program
/// through the command line, against the report's call tree of the same trace.
final class PerfettoExportTests: XCTestCase {
    private typealias T = SyntheticTrace
    private let ms: UInt64 = 1_000_000

    /// Two threads, a mark from a thread that recorded no calls, three frames, one hang:
    ///   app (4242):    0x1000 [0, 100 ms) > { 0x2000 [10, 40) > 0x3000 [15, 25); 0x2000 [50, 90) }
    ///   worker (4243): 0x4000 [20, 60 ms), unfinished > 0x5000 [30, 35)
    /// Instants are the clock's ticks (no process start): nanoseconds.
    private func profile() throws -> Profile {
        var worker = T.Calls()
        let workerCalls = [
            worker.call(function: 0x5000, start: 30 * ms, duration: 5 * ms, depth: 1),
            worker.call(function: 0x4000, start: 20 * ms, duration: 40 * ms, depth: 0,
                        flags: TraceFormat.CallFlag.unfinished),
        ]
        // HANG: stream, tid, captured, call start, fn, depth, quiet, flags, count, pcs.
        var hang: [UInt8] = []
        for value in [1, 4242, 80 * ms, 50 * ms, 0x2000, 1, 20 * ms, 0, 2, 0x2010, 0x1010] { hang += T.varint(value) }
        var trace = T()
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: T.process(executable: "/usr/bin/app", arguments: ["app", "-v"])
                  + T.thread(stream: 1, tid: 4242, name: "app") + T.thread(stream: 2, tid: 4243, name: "worker")),
            .init(stream: 1, tid: 4242, seq: 0, payload: FourCalls.payload()),
            .init(stream: 2, tid: 4243, seq: 0, payload: workerCalls.flatMap { $0 }),
            .init(stream: 0, tid: 0, seq: 1, payload: T.mark("early", tick: 5 * ms, tid: 4244, stream: 0)
                  + T.mark("ready", tick: 30 * ms) + T.mark("config", extra: "path=/etc/x", tick: 45 * ms, tid: 4243, stream: 2)
                  + T.mark(String(repeating: "m", count: 300), tick: 46 * ms)
                  + T.frames(at: [0, 16_666_667, 50 * ms]) + T.sized(TraceFormat.Tag.hang, hang)),
        ]
        return try syntheticProfile(trace.bytes)
    }

    private func bytes(_ profile: Profile) -> [UInt8] {
        var bytes: [UInt8] = []
        let output = ByteOutput { bytes.append(contentsOf: $0) }
        PerfettoExport.render(ViewInput([profile]), options: ViewOptions(), to: output)
        output.flush()
        return bytes
    }

    private func read(_ bytes: [UInt8]) throws -> PerfettoTraceSummary {
        let url = Workspace.directory("perfetto").appendingPathComponent("synthetic-\(UUID().uuidString.prefix(8)).pftrace")
        try Data(bytes).write(to: url)
        return try PerfettoTraceSummary.read(url)
    }

    func testSyntheticTraceReadsBackSliceBySliceWithTheOfficialProtos() throws {
        let summary = try read(bytes(try profile()))
        XCTAssertEqual(summary.problems, [])
        XCTAssertEqual(summary.sequences, 6, "descriptors, two threads, marks, frames, hangs")

        let process = try XCTUnwrap(summary.tracks.first { $0.processName != nil }, "\(summary.tracks)")
        XCTAssertEqual(process.pid, 4242)
        XCTAssertEqual(process.processName, "app")
        XCTAssertEqual(process.cmdline, ["app", "-v"])
        XCTAssertNil(process.parent)
        let app = try XCTUnwrap(summary.threadTrack(tid: 4242), "\(summary.tracks)")
        let worker = try XCTUnwrap(summary.threadTrack(tid: 4243), "\(summary.tracks)")
        let quiet = try XCTUnwrap(summary.threadTrack(tid: 4244), "a track for the thread that only marked")
        XCTAssertEqual([app.threadName, worker.threadName, quiet.threadName], ["app", "worker", ""])
        for track in [app, worker, quiet] {
            XCTAssertEqual(track.pid, 4242)
            XCTAssertEqual(track.parent, process.uuid)
        }
        let frames = try XCTUnwrap(summary.track(named: "frames"))
        let hangs = try XCTUnwrap(summary.track(named: "hangs"))
        XCTAssertEqual([frames.parent, hangs.parent], [process.uuid, process.uuid])
        XCTAssertEqual(summary.tracks.count, 6)

        // Calls: begin order is pre-order; times in ns; cost_ns (no overhead here) equals the duration.
        func calls(_ track: PerfettoTraceSummary.Track) -> [String] {
            summary.slices(on: track).map { "\($0.name) \($0.start / ms)-\($0.end / ms) d\($0.depth)" }
        }
        XCTAssertEqual(calls(app), ["0x1000 0-100 d0", "0x2000 10-40 d1", "0x3000 15-25 d2", "0x2000 50-90 d1"])
        XCTAssertEqual(calls(worker), ["0x4000 20-60 d0", "0x5000 30-35 d1"])
        XCTAssertEqual(summary.slices(on: app).map(\.start), [0, 10 * ms, 15 * ms, 50 * ms].map { UInt64($0) }, "exact ns")
        for slice in summary.slices(on: app) + summary.slices(on: worker) {
            XCTAssertEqual(slice.args["cost_ns"], .int(Int64(slice.end - slice.start)), slice.name)
            XCTAssertNil(slice.source, "no lines in this trace")
        }
        XCTAssertEqual(summary.slices(on: worker).map { $0.args["unfinished"] }, [.bool(true), nil])

        // Marks on their threads' tracks.
        let marks = summary.instants.filter { $0.track != frames.uuid }
        XCTAssertEqual(marks.map { "\($0.name.prefix(8)) \($0.track) \($0.at)" },
                       ["early \(quiet.uuid) \(5 * ms)", "ready \(app.uuid) \(30 * ms)", "config \(worker.uuid) \(45 * ms)",
                        "mmmmmmmm \(app.uuid) \(46 * ms)"])
        XCTAssertEqual(marks[2].args, ["extra": .string("path=/etc/x")])
        XCTAssertEqual(marks[3].name, String(repeating: "m", count: 300), "a packet over 127 bytes")

        // Frames: a slice from each start to the next; the last an instant.
        XCTAssertEqual(summary.slices(on: frames).map { "\($0.name) \($0.start)-\($0.end)" },
                       ["frame 0-16666667", "frame 16666667-\(50 * ms)"])
        XCTAssertEqual(summary.instants(on: frames).map { "\($0.name) \($0.at)" }, ["frame \(50 * ms)"])

        // The hang: over its quiet time before the capture, with its stack.
        let hang = try XCTUnwrap(summary.slices(on: hangs).first)
        XCTAssertEqual(summary.slices(on: hangs).count, 1)
        XCTAssertEqual("\(hang.name) \(hang.start / ms)-\(hang.end / ms)", "hang in 0x2000 60-80")
        XCTAssertEqual(hang.args["stack"], .array(["0x2010", "0x1010"]))
    }

    /// Spans: two overlapping spans of one name (one ended on another thread) and one unfinished,
    /// each on an async track of its own named by the span, milestones instants on it.
    func testSpansAreSlicesOnAsyncTracksWithMilestonesAsInstants() throws {
        var profile = try profile()
        let plain = bytes(profile)
        func at(_ value: UInt64) -> Instant { Instant(nanoseconds: Int64(value * ms)) }
        profile.ended = at(100)
        profile.spans = [
            ProfileSpan(name: "open", extra: "path=a", begin: at(5), end: at(45), beginTid: 4242, endTid: 4243,
                        milestones: [.init(name: "parsed", at: at(10), tid: 4242), .init(name: "laid out", at: at(30), tid: 4243)]),
            ProfileSpan(name: "open", begin: at(20), end: at(60), beginTid: 4242, endTid: 4242),
            ProfileSpan(name: "request", begin: at(70), end: nil, beginTid: 4243, endTid: nil,
                        milestones: [.init(name: "sent", at: at(80), tid: 4243)]),
        ]
        let summary = try read(bytes(profile))
        XCTAssertEqual(summary.problems, [])
        XCTAssertEqual(summary.sequences, 7, "the spans on a sequence of their own")
        let process = try XCTUnwrap(summary.tracks.first { $0.processName != nil })
        let spanTracks = summary.tracks.filter { ["open", "request"].contains($0.name) }
        XCTAssertEqual(spanTracks.map(\.name), ["open", "open", "request"])
        XCTAssertEqual(Set(spanTracks.map(\.uuid)).count, 3, "a track per span: overlapping ones do not nest")
        for track in spanTracks {
            XCTAssertEqual(track.parent, process.uuid)
            XCTAssertNil(track.tid)
        }
        let slices = spanTracks.flatMap { summary.slices(on: $0) }
        XCTAssertEqual(slices.map { "\($0.name) \($0.start)-\($0.end) d\($0.depth)" },
                       ["open \(5 * ms)-\(45 * ms) d0", "open \(20 * ms)-\(60 * ms) d0", "request \(70 * ms)-\(100 * ms) d0"])
        XCTAssertEqual(slices[0].args, ["extra": .string("path=a"), "begin_tid": .int(4242), "end_tid": .int(4243)])
        XCTAssertEqual(slices[1].args, ["begin_tid": .int(4242), "end_tid": .int(4242)])
        XCTAssertEqual(slices[2].args, ["begin_tid": .int(4243), "unfinished": .bool(true)], "ends when the trace ended")
        let milestones = spanTracks.flatMap { summary.instants(on: $0) }
        XCTAssertEqual(milestones.map { "\($0.name) \($0.track) \($0.at)" },
                       ["parsed \(spanTracks[0].uuid) \(10 * ms)", "laid out \(spanTracks[0].uuid) \(30 * ms)",
                        "sent \(spanTracks[2].uuid) \(80 * ms)"])
        XCTAssertEqual(milestones.map { $0.args["tid"] }, [.int(4242), .int(4243), .int(4243)])

        profile.spans = []
        XCTAssertEqual(bytes(profile), plain, "without spans, the output is as before")
    }

    /// A tid the kernel gave a second thread after the first ended: two tracks, each thread's calls
    /// nested on its own (one track would interleave two packet sequences' slices).
    func testAReusedTidGetsATrackPerThread() throws {
        var trace = T()
        func calls(_ start: UInt64) -> [UInt8] {
            var calls = T.Calls()
            return calls.call(function: 0x2000, start: start + ms, duration: ms, depth: 1)
                + calls.call(function: 0x1000, start: start, duration: 5 * ms, depth: 0)
        }
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: T.thread(stream: 2, tid: 4243, name: "first")
                  + T.thread(stream: 3, tid: 4243, name: "second")),
            .init(stream: 1, tid: 4242, seq: 0, payload: calls(0)),
            .init(stream: 2, tid: 4243, seq: 0, payload: calls(10 * ms)),
            .init(stream: 3, tid: 4243, seq: 0, payload: calls(20 * ms)),
        ]
        let profile = try syntheticProfile(trace.bytes)
        XCTAssertEqual(profile.threads.map(\.tid), [4242, 4243, 4243])
        let summary = try read(bytes(profile))
        XCTAssertEqual(summary.problems, [])
        let reused = summary.tracks.filter { $0.tid == 4243 }
        XCTAssertEqual(reused.map(\.threadName), ["first", "second"])
        XCTAssertEqual(reused.map { summary.slices(on: $0).map { "\($0.depth) \($0.start / ms)" } },
                       [["0 10", "1 11"], ["0 20", "1 21"]])
    }

    /// A file far smaller than the Chrome JSON of the same calls: names once per thread, not per call.
    func testOutputIsSmallerThanChromeJSON() throws {
        let profile = try profile()
        let perfetto = bytes(profile).count
        let chrome = ChromeExport.text(ViewInput([profile])).utf8.count
        XCTAssertLessThan(perfetto, chrome, "perfetto \(perfetto) B, chrome \(chrome) B")
    }

    func testAnEmptyProfileIsAValidTrace() throws {
        let summary = try read(bytes(Profile(pid: 7)))
        XCTAssertEqual(summary.problems, [])
        XCTAssertEqual(summary.slices.count, 0)
        XCTAssertEqual(summary.tracks.first?.processName, "pid 7")
    }

    /// marks.c through `calltrace export`: every thread's slices nest exactly as the report's call
    /// tree of the same trace; main with its source line; marks and frames on their tracks.
    func testRealProgramExportsTheReportsCallTree() throws {
        let fixture = try Fixture.build(["marks.c"], compiler: .gcc)
        let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0"], traceName: "perfetto")
        XCTAssertEqual(run.status, 0, run.description)
        let out = fixture.directory.appendingPathComponent("marks.pftrace")
        let export = try calltrace(["export", trace.path, "--format", "perfetto", "-o", out.path])
        XCTAssertEqual(export.status, 0, export.description)
        let report = try calltrace(["report", trace.path, "--format", "json"])
        XCTAssertEqual(report.status, 0, report.description)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        let summary = try PerfettoTraceSummary.read(out)
        XCTAssertEqual(summary.problems, [])

        let threads = try XCTUnwrap(document["threads"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(threads.count, 1)
        for thread in threads {
            let tid = try XCTUnwrap(thread["tid"] as? Int)
            let track = summary.threadTrack(tid: tid)
            XCTAssertNotNil(track, "thread \(tid) has a track")
            XCTAssertEqual(track?.pid, document["pid"] as? Int)
            // The report's tree in pre-order, as "depth name".
            var expected: [String] = []
            func visit(_ calls: [[String: Any]], _ depth: Int) {
                for call in calls {
                    expected.append("\(depth) \(call["function"] as? String ?? "?")")
                    visit(call["children"] as? [[String: Any]] ?? [], depth + 1)
                }
            }
            visit(thread["calls"] as? [[String: Any]] ?? [], 0)
            let slices = summary.slices(on: track)
            XCTAssertEqual(slices.map { "\($0.depth) \($0.name)" }, expected, "thread \(tid)")
            // Each slice inside its parent.
            var open: [PerfettoTraceSummary.Slice] = []
            for slice in slices {
                open.removeLast(max(open.count - slice.depth, 0))
                if let parent = open.last {
                    XCTAssertTrue(parent.start <= slice.start && slice.end <= parent.end,
                                  "\(slice.name) [\(slice.start), \(slice.end)) outside \(parent.name) [\(parent.start), \(parent.end))")
                }
                open.append(slice)
            }
        }
        let mainTrack = try XCTUnwrap(summary.threadTrack(tid: document["pid"] as? Int ?? -1))
        let main = try XCTUnwrap(summary.slices(on: mainTrack).first { $0.name == "main" }, "\(summary.slices.prefix(20))")
        XCTAssertEqual(main.depth, 0)
        XCTAssertTrue(main.source?.file.hasSuffix("marks.c") ?? false, "\(String(describing: main.source))")
        XCTAssertGreaterThan(main.source?.line ?? 0, 0)
        XCTAssertTrue(summary.slices(on: mainTrack).contains { $0.name == "do_frame" && $0.depth == 1 },
                      "main's children: \(summary.slices(on: mainTrack).filter { $0.depth == 1 }.map(\.name))")
        let marks = summary.instants(on: mainTrack)
        XCTAssertTrue(marks.contains { $0.name == "ready" }, "\(marks.map(\.name))")
        XCTAssertEqual(marks.first { $0.name == "config" }?.args["extra"], .string("path=/etc/x"))
        XCTAssertTrue(summary.instants.contains { $0.name == "worker start" && $0.track != mainTrack.uuid })
        let frames = summary.track(named: "frames")
        XCTAssertEqual(summary.slices(on: frames).count, 19, "20 frames: 19 intervals")
        XCTAssertEqual(summary.instants(on: frames).count, 1, "and the last frame")
    }

    /// hang.c poll through `calltrace export`: the hang is a slice on "hangs" over at least the
    /// 200 ms the main thread was quiet, named for the call it hung in, libc's poll innermost in
    /// its stack and main outermost.
    func testRealHangIsASliceWithItsNativeStack() throws {
        let fixture = try Fixture.build(["hang.c"], compiler: .gcc, flags: ["-O2", "-g", "-pthread"])
        let (run, trace) = try fixture.run(["poll"], environment: ["CALLTRACE_HANG": "200ms", "CALLTRACE_THRESHOLD": "1ms"],
                                           traceName: "perfetto-hang")
        XCTAssertEqual(run.status, 3, "the fixture's own status: \(run)")
        let out = fixture.directory.appendingPathComponent("hang.pftrace")
        let export = try calltrace(["export", trace.path, "--format", "perfetto", "-o", out.path])
        XCTAssertEqual(export.status, 0, export.description)
        let summary = try PerfettoTraceSummary.read(out)
        XCTAssertEqual(summary.problems, [])
        let hangs = summary.slices(on: summary.track(named: "hangs"))
        XCTAssertEqual(hangs.count, 1, "\(hangs.map(\.name))")
        let hang = try XCTUnwrap(hangs.first)
        XCTAssertEqual(hang.name, "hang in wait_in_poll")
        XCTAssertGreaterThanOrEqual(hang.end - hang.start, 200_000_000, "the quiet time")
        guard case .array(let stack)? = hang.args["stack"] else { return XCTFail("no stack: \(hang.args)") }
        XCTAssertTrue(stack.first?.contains("poll") ?? false, "innermost is libc's poll: \(stack)")
        XCTAssertTrue(stack.contains { $0.hasPrefix("wait_in_poll") } && stack.contains { $0.hasPrefix("main") }, "\(stack)")
        // The hung call's slice spans the hang (give or take the hooks' own time at its entry).
        let call = try XCTUnwrap(summary.slices.first { $0.name == "wait_in_poll" })
        XCTAssertTrue(call.start <= hang.start + 1_000_000 && hang.end <= call.end,
                      "hang [\(hang.start), \(hang.end)) inside wait_in_poll [\(call.start), \(call.end))")
    }
}

/// The protobuf writer's bytes, by hand from the encoding rules.
final class ProtobufWriterTests: XCTestCase {
    private func written(_ body: (ProtobufWriter) -> Void) -> [UInt8] {
        let writer = ProtobufWriter(capacity: 64)
        body(writer)
        var bytes: [UInt8] = []
        let output = ByteOutput { bytes.append(contentsOf: $0) }
        writer.drain(to: output)
        output.flush()
        return bytes
    }

    func testScalarsAreVarintsWithTheirTags() {
        XCTAssertEqual(written { $0.uint(1, 150) }, [0x08, 0x96, 0x01])
        XCTAssertEqual(written { $0.uint(87, 1) }, [0xB8, 0x05, 0x01], "a two-byte tag")
        XCTAssertEqual(written { $0.int(2, -1) }, [0x10] + [UInt8](repeating: 0xFF, count: 9) + [0x01], "two's complement")
        XCTAssertEqual(written { $0.bool(2, true) }, [0x10, 0x01])
        XCTAssertEqual(written { $0.string(2, "testing") }, [0x12, 0x07] + Array("testing".utf8))
    }

    /// A nested message's length takes one byte below 128, more above: the body moves up.
    func testNestedMessagesOfEveryLengthSize() {
        XCTAssertEqual(written { w in w.message(3) { w.uint(1, 150) } }, [0x1A, 0x03, 0x08, 0x96, 0x01])
        XCTAssertEqual(written { w in w.message(1) {} }, [0x0A, 0x00])
        for size in [127, 128, 300, 16_383, 16_384, 70_000] {
            let text = String(repeating: "x", count: size)
            let bytes = written { w in w.message(1) { w.message(2) { w.string(3, text) } } }
            let inner = [0x1A] + T.varint(UInt64(size)) + Array(text.utf8)
            let middle = [0x12] + T.varint(UInt64(inner.count)) + inner
            XCTAssertEqual(bytes, [0x0A] + T.varint(UInt64(middle.count)) + middle, "body of \(size) bytes")
        }
    }

    func testDrainWritesNothingWhileAMessageIsOpenAndCloseWithoutOpenIsHarmless() {
        XCTAssertEqual(written { w in
            w.beginMessage(1)
            w.uint(1, 1)
        }, [])
        XCTAssertEqual(written { w in
            w.endMessage()
            w.uint(1, 1)
        }, [0x08, 0x01])
    }

    private typealias T = SyntheticTrace
}
