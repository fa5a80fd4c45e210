@testable import CalltraceKit
import Foundation
import XCTest

/// The format's later additions, read from synthetic traces: blocks shared by several streams
/// (SEGMENT), the header's `lost` reasons, and a PROCESS record whose command line was cut.
final class ReaderFormatTests: XCTestCase {
    typealias T = SyntheticTrace

    // MARK: - SEGMENT

    /// Block A holds stream 1's first piece, then a SEGMENT with stream 2's first piece, then a
    /// SEGMENT with stream 1's third piece; block B (file order after A) holds stream 1's second
    /// piece. Each stream gets its calls in `seq` order, with delta state starting over at each
    /// SEGMENT, and no warning.
    func testSharedBlockGivesEachStreamItsPiecesInSeqOrder() throws {
        var calls = T.Calls()
        var shared = calls.call(function: 0x1000, start: 100, duration: 10, depth: 1)
        calls.reset()
        shared += T.segment(stream: 2, tid: 77, seq: 0)
        shared += calls.call(function: 0x2000, start: 150, duration: 20, depth: 0)
        shared += calls.call(function: 0x2100, start: 180, duration: 1, depth: 2)
        calls.reset()
        shared += T.segment(stream: 1, tid: 4242, seq: 2)
        shared += calls.call(function: 0x1300, start: 500, duration: 30, depth: 0)
        calls.reset()
        let second = calls.call(function: 0x1200, start: 300, duration: 40, depth: 0)
        var trace = T()
        trace.blocks = [
            .init(stream: 1, tid: 4242, seq: 0, payload: shared),
            .init(stream: 1, tid: 4242, seq: 1, payload: second),
            .init(stream: 0, tid: 0, seq: 0, payload: T.thread(stream: 2, tid: 77, name: "worker")),
        ]
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.warnings, [])
        XCTAssertEqual(read.records(ofStream: 1).map(\.function), [0x1000, 0x1200, 0x1300])
        XCTAssertEqual(read.records(ofStream: 1).map(\.startTick), [100, 300, 500])
        XCTAssertEqual(read.records(ofStream: 2).map(\.function), [0x2000, 0x2100])
        XCTAssertEqual(read.records(ofStream: 2).map(\.depth), [0, 2])
        XCTAssertEqual(read.records(ofStream: 2).map(\.stream), [2, 2])
        XCTAssertEqual(read.threads.map(\.tid), [4242, 77], "main thread first, then by stream")
        XCTAssertEqual(read.threads.last?.name, "worker")
        XCTAssertEqual(read.callCounts.filter { $0.value > 0 }, [1: 3, 2: 2])
    }

    /// A stream that lives only in segments (a short-lived thread) is a thread of the trace.
    func testStreamOnlyInSegmentsIsAThread() throws {
        var calls = T.Calls()
        var payload = T.leafCalls(3)
        for stream in 2...40 {
            calls.reset()
            payload += T.segment(stream: UInt64(stream), tid: UInt64(1000 + stream), seq: 0)
            payload += calls.call(function: 0x5000, start: UInt64(stream) * 100, duration: 7, depth: 0)
        }
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: payload)]
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.threads.count, 40, "\(read.warnings)")
        XCTAssertEqual(read.threads.first?.tid, 4242)
        XCTAssertEqual(read.records(ofStream: 17).map(\.startTick), [1700])
        XCTAssertEqual(read.threads.first { $0.stream == 17 }?.tid, 1017)
        XCTAssertTrue(read.warnings.allSatisfy { !$0.contains("missing") }, "\(read.warnings)")
    }

    func testSegmentForStreamZeroEndsTheBlockWithAWarning() throws {
        var payload = T.leafCalls(4)
        payload += T.segment(stream: 0, tid: 0, seq: 5)
        payload += T.leafCalls(4, startingAt: 9000)
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: payload)]
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.records(ofStream: 1).count, 4, "the records before the SEGMENT are kept")
        XCTAssertEqual(read.warnings.filter { $0.contains("SEGMENT") && $0.contains("names stream 0") }.count, 1,
                       "\(read.warnings)")
    }

    func testSegmentRepeatingASeqEndsTheBlockWithAWarning() throws {
        var payload = T.leafCalls(4)
        payload += T.segment(stream: 1, tid: 4242, seq: 0)  // the block's own piece
        payload += T.leafCalls(4, startingAt: 9000)
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: payload)]
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.records(ofStream: 1).map(\.startTick), [1000, 1010, 1020, 1030])
        XCTAssertEqual(read.warnings.filter { $0.contains("repeats piece 0 of stream 1") }.count, 1, "\(read.warnings)")
    }

    // MARK: - Why records were lost

    private static let threeLostToMuting = "3 calls that may have been slow were lost: they began while their function was "
        + "being muted, and lost their exit hook (CALLTRACE_MUTE=off keeps every function timed)"

    /// A program's metadata and two calls.
    private func callTrace() -> T {
        var trace = T()
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: T.process(executable: "/bin/p", arguments: ["p"])),
            .init(stream: 1, tid: 4242, seq: 0, payload: T.leafCalls(2)),
        ]
        return trace
    }

    /// Every `lost` bit is one line, the errno goes with the reason it explains, and bits this
    /// reader does not know get one line of their own.
    func testEveryLostBitIsOneWarningLine() throws {
        var trace = callTrace()
        trace.drops = 12
        trace.mutingDrops = 3
        trace.lost = TraceFormat.Lost.known | (1 << 12) | (1 << 30)
        trace.lostErrno = UInt32(ENOSPC)
        let read = try DecodedTrace.read(bytes: trace.bytes)
        let expected = [
            "12 calls were dropped: their thread had no trace block to write to",
            "records were dropped: a burst of calls outran the trace's block ring (record with a larger --buffer, CALLTRACE_BUFFER)",
            "records were dropped: the file system had no room for the trace (No space left on device); the runtime leaves 5 % of it (at most 1 GiB) to the program, and CALLTRACE_LIMIT keeps a trace within a size",
            "recording stopped: the trace reached the file size limit (RLIMIT_FSIZE)",
            "records were dropped: a trace block could not be mapped (out of memory or mappings)",
            "records were dropped: the runtime's drain thread could not run, so only the blocks prepared at start were used",
            "the main thread's open calls could not be recorded when another thread ended the process (membarrier unavailable, or the main thread was inside a record write)",
            "the command line was too long for the trace and was cut",
            "marks, frames or span events were dropped: more came than the runtime's queue of them holds before its drain thread "
                + "could write them (1024 at a time), or they came after the trace closed",
            Self.threeLostToMuting,
            "metadata records (modules, thread names, marks, frames, spans, muted functions) were dropped: no block was "
                + "ready for them (a flight recorder whose metadata filled its limit, or a burst that outran the ring)",
            "the flight recorder could not keep every open span's begin and every mark name's latest mark (more than an eighth "
                + "of CALLTRACE_LIMIT, 1,024 open spans or 256 mark names): some were overwritten with the oldest events",
            "calls made before the runtime started are not in the trace: a .preinit_array function, which the loader runs "
                + "before any constructor, ran instrumented code",
            "records were lost for a reason this calltrace does not know (lost bits 0x40001000); a newer calltrace may say more",
        ]
        XCTAssertEqual(read.warnings, expected)
    }

    func testLostErrnoGoesWithTheReasonItExplains() throws {
        var trace = callTrace()
        trace.lost = TraceFormat.Lost.fileLimit | TraceFormat.Lost.noSpace
        trace.lostErrno = UInt32(EFBIG)
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.warnings, [
            "records were dropped: the file system had no room for the trace; the runtime leaves 5 % of it (at most 1 GiB) to the program, and CALLTRACE_LIMIT keeps a trace within a size",
            "recording stopped: the trace reached the file size limit (RLIMIT_FSIZE) (File too large)",
        ])
    }

    /// Calls dropped for want of a block and calls lost to muting are counted apart, each count
    /// with its own reason (issue 27: a muting loss was reported as a full buffer), and `info`
    /// splits its row the same way.
    func testEachDropCountNamesItsOwnReason() throws {
        var trace = callTrace()
        trace.drops = 2
        trace.mutingDrops = 3
        trace.lost = TraceFormat.Lost.ringEmpty | TraceFormat.Lost.muting
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.warnings, [
            "2 calls were dropped: their thread had no trace block to write to",
            "records were dropped: a burst of calls outran the trace's block ring (record with a larger --buffer, CALLTRACE_BUFFER)",
            Self.threeLostToMuting,
        ])
        XCTAssertEqual(read.header.callsDroppedForBlocks, 2)
        XCTAssertEqual(read.header.callsLostToMuting, 3)
        let info = InfoRenderer(trace: read.trace).render()
        XCTAssertTrue(info.split(separator: "\n").contains { $0.hasPrefix("drops:") && $0.hasSuffix(" 5 (2 with no block to write to, 3 lost to muting)") },
                      info)

        // Lost to muting alone: no word of a buffer.
        trace.drops = 0
        trace.lost = TraceFormat.Lost.muting
        let muting = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(muting.warnings, [
            Self.threeLostToMuting,
        ])
        let mutingInfo = InfoRenderer(trace: muting.trace).render()
        XCTAssertTrue(mutingInfo.split(separator: "\n").contains { $0.hasPrefix("drops:") && $0.hasSuffix(" 3 (3 lost to muting)") },
                      mutingInfo)
    }

    /// A runtime before `muting_drops` counted its losses to muting in `drops`: when muting is the
    /// only reason the header gives, those drops are muting's, not a full buffer's.
    func testOlderRuntimesMutingDropsAreNotBlamedOnTheBuffer() throws {
        var trace = callTrace()
        trace.drops = 3
        trace.lost = TraceFormat.Lost.muting
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.warnings, [
            Self.threeLostToMuting,
        ])
    }

    /// Traces from before `lost`: drops meant a full ring, and the warning still says so.
    func testDropsWithoutAReasonBlameTheBuffer() throws {
        var trace = callTrace()
        trace.drops = 3
        trace.nestedDrops = 2
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.warnings, [
            "3 calls were dropped because the trace buffer was full (record with a larger --buffer)",
            "2 calls were dropped because a signal handler ran while their thread was writing a record",
        ])
    }

    // MARK: - A command line too long for a block

    func testCutCommandLineShowsHowManyArgumentsAreMissing() throws {
        var trace = T()
        trace.lost = TraceFormat.Lost.argsCut
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0,
                  payload: T.process(executable: "/usr/bin/xargs-like", arguments: ["prog", "a", "b"], omitted: 99_997)),
            .init(stream: 1, tid: 4242, seq: 0, payload: T.leafCalls(2)),
        ]
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.process?.arguments, ["prog", "a", "b"])
        XCTAssertEqual(read.process?.omittedArguments, 99_997)
        XCTAssertEqual(read.warnings, ["the command line was too long for the trace and was cut (99997 arguments left out)"])
        let info = InfoRenderer(trace: read.trace).render()
        XCTAssertTrue(info.contains("command line: prog a b \u{2026} (99997 more arguments)"), info)
    }

    /// A PROCESS record without the trailing count (an older writer) has nothing left out.
    func testProcessRecordWithoutTheCountOmitsNothing() throws {
        var trace = T()
        trace.blocks = [.init(stream: 0, tid: 0, seq: 0, payload: T.process(executable: "/bin/p", arguments: ["p", "-v"]))]
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.process?.omittedArguments, 0)
        let info = InfoRenderer(trace: read.trace).render()
        XCTAssertTrue(info.contains("command line: p -v\n"), info)
    }

    /// A command line of a million arguments in one record (a crafted file, or a huge block):
    /// read in time, every argument kept.
    func testMillionArgumentCommandLineReads() throws {
        var trace = T()
        trace.blocks = [.init(stream: 0, tid: 0, seq: 0, payload: [])]
        trace.blockSize = 4 << 20
        trace.blocks[0].payload = T.process(executable: "/bin/p", arguments: Array(repeating: "x", count: 1_000_000))
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.process?.arguments.count, 1_000_000, "\(read.warnings)")
    }
}
