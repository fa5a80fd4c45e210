@testable import CalltraceKit
import Foundation
import XCTest

/// CALLTRACE_LIMIT (`record --limit`): a flight recorder. Fixture: Fixtures/flight.c, some 3
/// million calls (25 MB of records at threshold 0) in phases, against a 2 MB limit: the file never
/// grows past it, the trace holds the newest calls with every name (the metadata is never reused),
/// `info` and `report` say what it covers and what was overwritten, and a program killed with
/// SIGKILL while blocks are being reused leaves a trace that reads without damage.
final class FlightRecorderTests: XCTestCase {
    private let limit = 2 << 20

    private func settings(_ extra: [String: String] = [:]) -> [String: String] {
        ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_LIMIT": "2M"].merging(extra) { _, new in new }
    }

    private func fileSize(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? -1
    }

    /// Warnings that would mean the reader took a reused block for damage, a gap or a repeat.
    private func damage(_ warnings: [String]) -> [String] {
        warnings.filter { line in
            ["damaged", "missing or repeated", "magic", "claims", "hole", "truncated", "stopped reading"]
                .contains { line.contains($0) }
        }
    }

    func testTheFileStaysWithinTheLimitAndHoldsTheNewestCalls() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["flight.c"], compiler: compiler)
            let untraced = try fixture.runUntraced()
            let (result, url) = try fixture.run(environment: settings())
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            XCTAssertEqual(result.stdout, untraced.stdout, "\(compiler)")
            XCTAssertFalse(result.stderr.contains("calltrace: warning"), "\(compiler): \(result.stderr)")
            // The fixture looked at its own trace after every round, while blocks were being reused.
            let seen = result.stderr.split(separator: "\n").first { $0.hasPrefix("largest trace seen: ") }
            let largest = try XCTUnwrap(seen.flatMap { Int($0.dropFirst("largest trace seen: ".count)) }, result.stderr)
            XCTAssertGreaterThan(largest, limit / 2, "\(compiler): the file grew as far as the limit")
            XCTAssertLessThanOrEqual(largest, limit, "\(compiler): while running")
            XCTAssertLessThanOrEqual(fileSize(url), limit, "\(compiler): after exit")

            let trace = try RecordedTrace(url)
            let header = trace.trace.header
            XCTAssertEqual(header.limit, UInt64(limit))
            XCTAssertLessThanOrEqual(header.nextBlock, UInt64(limit))
            XCTAssertGreaterThan(header.overwrittenBlocks, 0, "\(compiler)")
            // Far more calls were overwritten than the trace holds: 2 MB holds some 250,000.
            XCTAssertGreaterThan(header.overwrittenCalls, UInt64(trace.calls.count), "\(compiler)")
            XCTAssertEqual(damage(trace.trace.warnings), [], "\(compiler)")
            let names = Set(trace.calls.map(\.name))
            XCTAssertTrue(names.isSuperset(of: ["main", "round_work", "phase_last", "leaf"]), "\(compiler): \(names)")
            XCTAssertFalse(names.contains("phase_first"), "\(compiler): the oldest calls are gone")
            XCTAssertFalse(names.contains { $0.hasPrefix("0x") }, "\(compiler): every name resolved: \(names)")

            let info = try calltrace(["info", url.path])
            XCTAssertEqual(info.status, 0, info.description)
            let row = try XCTUnwrap(info.stdout.split(separator: "\n").first { $0.hasPrefix("limit:") }, info.stdout)
            XCTAssertTrue(row.contains("2.00 MiB; \(header.overwrittenCalls) calls overwritten (\(header.overwrittenBlocks) blocks); "
                                       + "calls that ended from "), String(row))
            let report = try calltrace(["report", url.path])
            XCTAssertEqual(report.status, 0, report.description)
            XCTAssertTrue(report.stdout.hasPrefix("recorded with CALLTRACE_LIMIT (a flight recorder): the oldest "
                                                  + "\(header.overwrittenCalls) calls were overwritten; shown: calls that ended from "),
                          String(report.stdout.prefix(400)))
            let recorder = try XCTUnwrap(trace.trace.flightRecorder)
            let from = try XCTUnwrap(recorder.coveredFrom), to = try XCTUnwrap(recorder.coveredTo)
            XCTAssertLessThan(from, to)
            XCTAssertGreaterThan(from, .zero, "the overwritten calls ended first")
        }
    }

    /// SIGKILL in the middle of a round, at different moments of the reuse (the fixture kills
    /// itself after round N's first 50,000 calls; from round 9 on it has written 8 MB, four times
    /// the limit, even if a busy machine made it drop half): every trace reads without a damaged, missing
    /// or repeated block, within the limit, with the newest rounds in it.
    func testAProgramKilledWhileBlocksAreReusedLeavesAReadableTrace() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["flight.c"], compiler: compiler)
            for round in [9, 14, 21, 29] {
                let label = "\(compiler), killed in round \(round)"
                let (result, url) = try fixture.run([String(round)], environment: settings(), traceName: "killed-\(round)")
                XCTAssertEqual(result.signal, SIGKILL, "\(label): \(result)")
                XCTAssertLessThanOrEqual(fileSize(url), limit, label)
                let trace = try RecordedTrace(url)
                XCTAssertFalse(trace.trace.header.closedCleanly, label)
                XCTAssertGreaterThan(trace.trace.header.overwrittenBlocks, 0, label)
                XCTAssertEqual(damage(trace.trace.warnings), [], "\(label): \(trace.trace.warnings)")
                let names = Set(trace.calls.map(\.name))
                // main was still open: a killed program's open calls leave no record.
                XCTAssertTrue(names.isSuperset(of: ["round_work", "leaf"]), "\(label): \(names)")
                XCTAssertFalse(names.contains("phase_first"), label)
                XCTAssertFalse(names.contains { $0.hasPrefix("0x") }, "\(label): \(names)")
                let report = try calltrace(["report", url.path])
                XCTAssertEqual(report.status, 0, "\(label): \(report)")
            }
        }
    }

    /// A limit below 1M cannot hold the header, the metadata and a ring of blocks: one warning,
    /// and the program runs, recorded without a limit.
    func testATooSmallLimitWarnsOnceAndTheProgramRuns() throws {
        let fixture = try Fixture.build(["flight.c"], compiler: .gcc)
        let untraced = try fixture.runUntraced()
        let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms", "CALLTRACE_LIMIT": "100k"])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stdout, untraced.stdout)
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains("calltrace") }
        XCTAssertEqual(warnings.count, 1, result.stderr)
        XCTAssertTrue(warnings.first?.contains("CALLTRACE_LIMIT") ?? false, result.stderr)
        let trace = try RecordedTrace(url)
        XCTAssertEqual(trace.trace.header.limit, 0)
        XCTAssertNil(trace.trace.flightRecorder)
        let info = try calltrace(["info", url.path])
        XCTAssertFalse(info.stdout.contains("\nlimit:"), info.stdout)
    }

    /// `record --limit` hands the size to the runtime; a size the runtime would refuse is the
    /// option's error. The names `record` stores once the program has ended come after the
    /// limited blocks (`--no-symbols`: none, and the file is within the limit).
    func testRecordTakesTheLimitAsAnOption() throws {
        let fixture = try Fixture.build(["flight.c"], compiler: .gcc, wrapper: false)
        let result = try RecordCommand.run(["-t", "0", "--limit", "2M", "-o", "limited.trace"],
                                           [fixture.binary.path], in: fixture.directory)
        XCTAssertEqual(result.status, 0, result.description)
        let url = fixture.directory.appendingPathComponent("limited.trace")
        let trace = try RecordedTrace(url)
        let header = trace.trace.header
        XCTAssertEqual(header.limit, UInt64(limit))
        XCTAssertLessThanOrEqual(header.nextBlock, UInt64(limit))
        // The names are stored only where they fit (at exit the blocks made ready and unused are
        // cut off, which usually leaves room); else record says so. Never past the limit.
        XCTAssertLessThanOrEqual(fileSize(url), limit, "the names never take the file past the limit")
        XCTAssertTrue(header.symbolsOffset != 0 || result.stderr.contains("the names are not stored in"), result.stderr)
        XCTAssertTrue(trace.calls.contains { $0.name == "phase_last" })
        // Within the limit they are stored.
        let roomy = try RecordCommand.run(["-t", "10ms", "--limit", "2M", "-o", "roomy.trace"],
                                          [fixture.binary.path], in: fixture.directory)
        XCTAssertEqual(roomy.status, 0, roomy.description)
        let roomyURL = fixture.directory.appendingPathComponent("roomy.trace")
        XCTAssertNotEqual(try RecordedTrace(roomyURL).trace.header.symbolsOffset, 0, "record stored the names")
        XCTAssertLessThanOrEqual(fileSize(roomyURL), limit)
        let bare = try RecordCommand.run(["-t", "0", "--limit", "2M", "--no-symbols", "-o", "bare.trace"],
                                         [fixture.binary.path], in: fixture.directory)
        XCTAssertEqual(bare.status, 0, bare.description)
        XCTAssertLessThanOrEqual(fileSize(fixture.directory.appendingPathComponent("bare.trace")), limit)
        let bad = try RecordCommand.run(["--limit", "100k"], [fixture.binary.path], in: fixture.directory)
        XCTAssertNotEqual(bad.status, 0, bad.description)
        XCTAssertTrue(bad.stderr.contains("--limit '100k' is not valid: expected 0 (no limit) or a size of at least 1M"),
                      bad.stderr)
    }

    /// A table that would take a limited trace past its limit is not stored by `record` (which asks
    /// for `withinLimit`); `symbolize`, asked by name, stores it.
    func testNamesAreNotStoredPastTheLimit() throws {
        var trace = SyntheticTrace()
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: SyntheticTrace.process(executable: "/bin/app", arguments: ["app"])),
            .init(stream: 1, tid: 4242, seq: 0, payload: SyntheticTrace.leafCalls(10, startingAt: 1000)),
        ]
        trace.limit = UInt64(trace.bytes.count) // full to the byte
        let url = Workspace.temporary.appendingPathComponent("full-\(UUID().uuidString).trace")
        try Data(trace.bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        XCTAssertThrowsError(try TraceSymbolizer.symbolize(path: FilePath(url.path), withinLimit: true, warn: { _ in })) { error in
            XCTAssertTrue("\(error)".contains("past its limit of \(trace.limit)"), "\(error)")
        }
        XCTAssertEqual(fileSize(url), trace.bytes.count, "left as it was")
        _ = try TraceSymbolizer.symbolize(path: FilePath(url.path), warn: { _ in })
        XCTAssertGreaterThan(fileSize(url), trace.bytes.count, "symbolize stores them anyway")
    }

    /// A service that starts a short thread every 300 us for 2.5 s (Fixtures/service_churn.c: some
    /// 5,000 threads (fewer on a busy machine), each naming itself, most with no call recorded, every
    /// 100th ("slow-N") with one; a "ticker" thread
    /// with 100,000 frames a second, so that events blocks are reused) under a 1 MiB limit: the
    /// metadata stream, never reused, does not grow with the threads (a THREAD record each took it
    /// to 60 KB, and at some 100,000 threads a MiB would have starved the calls); every thread with
    /// calls in the trace keeps its name, whether it ended (its name went into its own stream) or
    /// still ran when the process was killed (its latest name is carried through the reuse of the
    /// events stream); `info` lists the threads with calls and counts the others in one line.
    func testAServiceChurningThreadsKeepsItsMetadataBoundedAndItsThreadsNamed() throws {
        let fixture = try Fixture.build(["service_churn.c"], compiler: .gcc)
        let settings = ["CALLTRACE_THRESHOLD": "1ms", "CALLTRACE_THREADS": "all", "CALLTRACE_LIMIT": "1M"]
        for kill in [false, true] {
            let label = kill ? "killed" : "exited"
            let (result, url) = try fixture.run(["2500", "300", "frames"] + (kill ? ["kill"] : []), environment: settings,
                                                traceName: label)
            XCTAssertEqual(result.signal, kill ? SIGKILL : nil, "\(label): \(result)")
            let started = try XCTUnwrap(Int(result.stdout.dropFirst("started ".count).prefix { $0.isNumber }), result.stdout)
            // At 15 bytes a THREAD record, the metadata stream would hold more than 4 KB.
            XCTAssertGreaterThan(started, 300, label)
            XCTAssertLessThanOrEqual(fileSize(url), 1 << 20, label)
            let trace = try RecordedTrace(url).trace
            let header = trace.header
            let context = "\(label): \(trace.warnings)"
            XCTAssertGreaterThan(header.overwrittenBlocks, 0, "\(context): the events stream was reused")
            XCTAssertEqual(header.lost & TraceFormat.Lost.metadata, 0, context)
            XCTAssertEqual(damage(trace.warnings), [], context)
            let metadata = try streamBytes(url, stream: 0)
            XCTAssertLessThan(metadata, 2048, "\(context): the process and module records only, whatever the threads")

            let withCalls = trace.threads.filter { (trace.callCounts[$0.stream] ?? 0) > 0 }
            let names = withCalls.filter { $0.tid != header.pid }.map(\.name)
            XCTAssertTrue(names.contains("ticker"), "\(context): \(names)")
            XCTAssertGreaterThan(names.filter { $0.hasPrefix("slow-") }.count, 0, "\(context): \(names)")
            // A quick thread may have a call too, on a busy machine (its thread function, preempted).
            XCTAssertTrue(names.allSatisfy { $0 == "ticker" || $0.hasPrefix("slow-") || $0.hasPrefix("quick-") },
                          "\(context): every one named: \(names)")

            let info = try calltrace(["info", url.path])
            XCTAssertEqual(info.status, 0, info.description)
            let section = info.stdout.components(separatedBy: "\nthreads:\n").last?.components(separatedBy: "\n\n").first ?? ""
            let lines = section.split(separator: "\n")
            // The main thread's line, one line per other thread with calls, one for the rest.
            let main = trace.threads.contains { $0.tid == header.pid } ? 1 : 0
            let idle = trace.threads.count - main - names.count
            XCTAssertEqual(lines.count, main + names.count + (idle > 0 ? 1 : 0), section)
            if idle > 0 { XCTAssertEqual(lines.last, "  \u{2026} and \(idle) more thread\(idle == 1 ? "" : "s") with no calls", section) }
            XCTAssertFalse(lines.dropFirst().contains { $0.hasSuffix(": 0 calls") }, section)
        }
    }

    /// Without a limit the names go into the metadata stream as before, but the registry of the
    /// threads running reuses the slots of those that ended: the 4,500th thread is named (the
    /// registry used to stop at the 4,096th), and `info` counts the thousands with no calls in one line.
    func testThreadsPastTheRegistrysSizeAreNamed() throws {
        let fixture = try Fixture.build(["service_churn.c"], compiler: .gcc)
        let (result, url) = try fixture.run(["4500", "0", "count"],
                                            environment: ["CALLTRACE_THRESHOLD": "1ms", "CALLTRACE_THREADS": "all"])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stdout, "started 4500\n")
        let trace = try RecordedTrace(url).trace
        let named = Set(trace.threads.map(\.name))
        XCTAssertTrue(named.isSuperset(of: ["ticker", "slow-199", "slow-4399"]), "\(named.sorted().suffix(5))")
        let idle = trace.threads.filter { (trace.callCounts[$0.stream] ?? 0) == 0 && $0.tid != trace.header.pid }.count
        XCTAssertGreaterThan(idle, 3000, "the short threads are listed")
        let info = try calltrace(["info", url.path])
        XCTAssertTrue(info.stdout.contains("\n  \u{2026} and \(idle) more threads with no calls\n"), info.stdout)
        XCTAssertTrue(info.stdout.contains(" \"slow-4399\": 2 calls\n"), info.stdout)
    }

    /// The payload bytes of `stream`'s blocks, read from their headers (docs/trace-format.md, "Blocks").
    private func streamBytes(_ url: URL, stream: UInt32) throws -> Int {
        let bytes = [UInt8](try Data(contentsOf: url))
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        let blockSize = u32(TraceFormat.HeaderOffset.blockSize)
        var total = 0
        for offset in stride(from: TraceFormat.headerSize, to: bytes.count - 31, by: blockSize)
        where bytes[offset..<(offset + 4)].elementsEqual("CTBK".utf8) && u32(offset + 8) == Int(stream) {
            total += u32(offset + 4)
        }
        return total
    }

    // MARK: - The reader's rules, on synthetic traces

    /// Events written all along (Fixtures/flight_events.c: 100,000 frames, 200 marks and 200 short
    /// spans, about 1.5 MB, with 3 MB of calls) under a 1 MiB limit: they are reused like the calls,
    /// so they never eat the calls' share of the file and no record finds no block (lost bit 9);
    /// what must outlive its block is kept: each mark name's latest mark ("launch" is its name's
    /// only one), the spans still open (with their milestones), and the newest calls.
    func testEventsWrittenAllAlongAreReusedAndWhatIsOpenIsKept() throws {
        let limit = 1 << 20
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["flight_events.c"], compiler: compiler)
            let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_LIMIT": "1M"])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            XCTAssertLessThanOrEqual(fileSize(url), limit, "\(compiler)")
            let (trace, profile) = try ProfileBuilder.read(path: FilePath(url.path)) {
                Symbolicator(modules: $0, lines: false, warn: { _ in })
            }
            let context = "\(compiler): \(trace.warnings)"
            XCTAssertEqual(trace.header.lost & TraceFormat.Lost.metadata, 0, context)
            XCTAssertGreaterThan(trace.header.overwrittenBlocks, 0, context)
            XCTAssertEqual(trace.header.lost & TraceFormat.Lost.eventsKept, 0, context)
            XCTAssertEqual(damage(trace.warnings), [], context)
            // Events were reused (not only dropped from a full queue): their stream starts past seq 0.
            let events = trace.pieces.filter { $0.stream == TraceFormat.eventsStream }.map(\.seq)
            XCTAssertGreaterThan(try XCTUnwrap(events.min(), context), 0, context)
            XCTAssertEqual(trace.flightRecorder?.eventsOverwritten, true, context)

            let marks = trace.marks.map { $0.extra.isEmpty ? $0.name : "\($0.name) \($0.extra)" }
            XCTAssertEqual(marks.first, "launch", "\(context): \(marks)")
            XCTAssertEqual(marks.last, "last", "\(context): \(marks)")
            XCTAssertTrue(marks.contains("round 199"), "\(context): the latest round: \(marks)")
            XCTAssertLessThan(marks.filter { $0.hasPrefix("round ") }.count, 200, "\(context): older rounds were reused")
            XCTAssertGreaterThan(trace.frames.count, 0, context)
            XCTAssertLessThan(trace.frames.count, 100_000, "\(context): older frames were reused")

            let session = try XCTUnwrap(profile.spans.first { $0.name == "session" }, context)
            XCTAssertFalse(session.isUnfinished, context)
            XCTAssertEqual(session.extra, "whole run", context)
            XCTAssertEqual(session.milestones.map(\.name), ["ready"], context)
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(session.duration), Nanoseconds(1_050_000_000), context)
            let forever = try XCTUnwrap(profile.spans.first { $0.name == "forever" }, context)
            XCTAssertTrue(forever.isUnfinished, context)
            XCTAssertEqual(profile.spans.filter { $0.name == "session" || $0.name == "forever" }.count, 2, context)
            let requests = profile.spans.filter { $0.name == "request" }
            XCTAssertGreaterThan(requests.count, 0, context)
            XCTAssertLessThan(requests.count, 200, "\(context): ended spans are reused")

            let names = Set(try RecordedTrace(url).calls.map(\.name))
            XCTAssertTrue(names.isSuperset(of: ["main", "round_work", "leaf"]), "\(context): \(names)")
        }
    }

    /// What the events stream keeps is bounded (Fixtures/flight_kept.c): 6,000 mark names, one
    /// mark each, are more than it keeps a latest mark for, so it forgets the oldest names and says
    /// so (lost bit 10), and the calls are never starved (no lost bit 9, the last round's calls
    /// there). 150 spans left open with a milestone each, under 100,000 frames: every begin and
    /// milestone survives the reuse of its block, even when the ring is short as blocks are reused.
    func testWhatTheEventsStreamKeepsIsBoundedAndOpenSpansSurvive() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["flight_kept.c"], compiler: compiler)
            let environment = ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_LIMIT": "1M"]

            let (named, namedURL) = try fixture.run(["names"], environment: environment)
            XCTAssertEqual(named.status, 0, "\(compiler): \(named)")
            let (trace, _) = try ProfileBuilder.read(path: FilePath(namedURL.path)) {
                Symbolicator(modules: $0, lines: false, warn: { _ in })
            }
            var context = "\(compiler) names: \(trace.warnings)"
            XCTAssertEqual(trace.header.lost & TraceFormat.Lost.metadata, 0, context)
            XCTAssertNotEqual(trace.header.lost & TraceFormat.Lost.eventsKept, 0, context)
            XCTAssertTrue(trace.warnings.contains { $0.contains("could not keep every open span's begin") }, context)
            XCTAssertLessThan(trace.marks.count, 3000, "\(context): what is kept is bounded (256 names, and the newest marks)")
            XCTAssertEqual(trace.marks.last?.name, "last", context)
            XCTAssertTrue(trace.marks.contains { $0.name == "loaded file-005999.dat" }, context)
            let calls = try RecordedTrace(namedURL).calls
            XCTAssertTrue(calls.contains { $0.name == "work" }, "\(context): calls are not starved")

            let (open, openURL) = try fixture.run(["open"], environment: environment)
            XCTAssertEqual(open.status, 0, "\(compiler): \(open)")
            let (openTrace, profile) = try ProfileBuilder.read(path: FilePath(openURL.path)) {
                Symbolicator(modules: $0, lines: false, warn: { _ in })
            }
            context = "\(compiler) open: \(openTrace.warnings)"
            XCTAssertGreaterThan(openTrace.header.overwrittenBlocks, 0, context)
            XCTAssertEqual(openTrace.header.lost & (TraceFormat.Lost.metadata | TraceFormat.Lost.eventsKept), 0, context)
            let conns = profile.spans.filter { $0.name.hasPrefix("conn ") }
            XCTAssertEqual(Set(conns.map(\.name)).count, 150, "\(context): \(conns.map(\.name))")
            XCTAssertEqual(conns.count, 150, context)
            XCTAssertTrue(conns.allSatisfy { $0.isUnfinished && $0.milestones.map(\.name) == ["accepted"] }, context)
            XCTAssertTrue(conns.allSatisfy { $0.extra.hasPrefix("connection ") }, context)
            XCTAssertLessThan(openTrace.frames.count, 100_000, "\(context): older frames were reused")
        }
    }

    /// A process killed after an open span's begin and a latest mark were written again and before
    /// their old block was reset leaves both copies: the reader takes them as one. Only in a
    /// limited trace: without a limit two equal records are two events.
    func testTheReaderTakesACarriedEventAndItsOriginalAsOne() throws {
        var trace = SyntheticTrace()
        trace.limit = 1 << 20
        trace.overwrittenBlocks = 1
        let events = SyntheticTrace.spanBegin(7, "open", tick: 100) + SyntheticTrace.mark("launch", tick: 90)
            + SyntheticTrace.frame(tick: 95)
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: SyntheticTrace.process(executable: "/bin/app", arguments: ["app"])),
            .init(stream: TraceFormat.eventsStream, tid: 0, seq: 3, payload: events),
            .init(stream: 1, tid: 4242, seq: 2, payload: SyntheticTrace.leafCalls(5, startingAt: 3000)),
            .init(stream: TraceFormat.eventsStream, tid: 0, seq: 5,
                  payload: SyntheticTrace.frame(tick: 3100) + SyntheticTrace.spanBegin(7, "open", tick: 100)
                      + SyntheticTrace.mark("launch", tick: 90)),
        ]
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.warnings, [])
        XCTAssertEqual(read.trace.marks.map(\.name), ["launch"])
        XCTAssertEqual(read.trace.spanEvents.map(\.id), [7])
        XCTAssertEqual(read.trace.frames.count, 2)
        XCTAssertEqual(read.trace.threads.map(\.stream), [1], "the events stream is no thread")

        var unlimited = trace
        unlimited.limit = 0
        unlimited.overwrittenBlocks = 0
        unlimited.blocks[1].seq = 0
        unlimited.blocks[2].seq = 0
        unlimited.blocks[3].seq = 1
        XCTAssertEqual(try DecodedTrace.read(bytes: unlimited.bytes).trace.marks.count, 2)
    }

    /// A limited trace as a SIGKILL may leave it: stream 1's pieces 0-2 and 5 were overwritten, one
    /// block is being reused (`used` 0, its header cleared) and one was reused and taken but not
    /// written yet (`used` 0, a new header that repeats a seq). Read without a warning; the same
    /// blocks in a trace without overwrites are a gap, and a repeated seq with records is damage.
    func testTheReaderTakesReusedBlocksForWhatTheyAre() throws {
        var trace = SyntheticTrace()
        trace.limit = 1 << 20
        trace.overwrittenBlocks = 4
        trace.overwrittenCalls = 40
        let metadata = SyntheticTrace.process(executable: "/bin/app", arguments: ["app"])
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: metadata),
            .init(stream: 1, tid: 4242, seq: 3, payload: SyntheticTrace.leafCalls(10, startingAt: 3000)),
            .init(stream: 0, tid: 0, seq: 0, payload: [], flags: 0),         // being reused
            .init(stream: 1, tid: 4242, seq: 4, payload: SyntheticTrace.leafCalls(10, startingAt: 4000)),
            .init(stream: 1, tid: 4242, seq: 6, payload: SyntheticTrace.leafCalls(10, startingAt: 6000)),
            .init(stream: 1, tid: 4242, seq: 4, payload: [], flags: 0),      // taken, nothing written yet
        ]
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.warnings, [])
        XCTAssertEqual(read.records.count, 30)
        XCTAssertEqual(read.records.map(\.startTick.count).first, 3000, "the oldest surviving piece first")
        let recorder = try XCTUnwrap(read.flightRecorder)
        XCTAssertEqual(recorder.overwrittenCalls, 40)
        XCTAssertEqual(recorder.coveredFrom, Nanoseconds(3005))
        XCTAssertEqual(recorder.coveredTo, Nanoseconds(6095))
        XCTAssertEqual(recorder.text, "1.00 MiB; 40 calls overwritten (4 blocks); "
                       + "calls that ended from 0.000003 s to 0.000006 s after the runtime started")

        var unlimited = trace
        unlimited.limit = 0
        unlimited.overwrittenBlocks = 0
        unlimited.overwrittenCalls = 0
        XCTAssertTrue(try DecodedTrace.read(bytes: unlimited.bytes).warnings
            .contains { $0.contains("stream 1 has missing or repeated blocks") })

        var repeated = trace
        repeated.blocks.append(.init(stream: 1, tid: 4242, seq: 6, payload: SyntheticTrace.leafCalls(1, startingAt: 7000)))
        XCTAssertTrue(try DecodedTrace.read(bytes: repeated.bytes).warnings
            .contains { $0.contains("stream 1 has missing or repeated blocks") })
    }
}
