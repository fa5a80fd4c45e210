@testable import CalltraceKit
import Foundation
import XCTest

/// A trace file written byte by byte, for damage no real program makes on demand: holes, shared
/// blocks, header fields a runtime sets only on a full disk. One tick is one nanosecond.
struct SyntheticTrace {
    struct Block {
        var stream: UInt32
        var tid: UInt64
        var seq: UInt64
        var payload: [UInt8]
        var flags: UInt32 = TraceFormat.BlockFlag.sealed
    }

    var blockSize = 4096
    var flags: UInt32 = TraceFormat.FileFlag.closed
    var pid: UInt64 = 4242
    var drops: UInt64 = 0
    var nestedDrops: UInt64 = 0
    var mutingDrops: UInt64 = 0
    var lost: UInt32 = 0
    var lostErrno: UInt32 = 0
    var thresholdNs: UInt64 = 0
    /// The run-delay sampler's `sched_flags` (`TraceFormat.SchedFlag`).
    var schedFlags: UInt32 = 0
    var overheadPairTicks: UInt64 = 0
    var overheadOwnTicks: UInt64 = 0
    /// CLOCK_MONOTONIC ns of the process's start, and the ticks of the runtime's start, of `main` and
    /// of the end (0: unknown). Ticks are nanoseconds here.
    var processStartNs: UInt64 = 0
    var initTick: UInt64 = 0
    var mainTick: UInt64 = 0
    var endTick: UInt64 = 0
    /// `CALLTRACE_FRAME` as the runtime stores it (the header's `frame_interval_ns`).
    var frameIntervalNs: UInt64 = 16_666_667
    /// nil: the end of the last block, as the runtime leaves it at a clean exit.
    var nextBlock: UInt64?
    /// The flight recorder's header fields (CALLTRACE_LIMIT).
    var limit: UInt64 = 0
    var overwrittenBlocks: UInt64 = 0
    var overwrittenCalls: UInt64 = 0
    /// The hang watchdog's header fields (CALLTRACE_HANG).
    var hangThresholdNs: UInt64 = 0
    var hangCount: UInt32 = 0
    /// CALLTRACE_THREADS as the header stores it (0 main, 1 all).
    var threadsMode: UInt32 = 0
    var blocks: [Block] = []

    /// The file: the header, then the blocks in order.
    var bytes: [UInt8] {
        var file = header
        for block in blocks { file += Self.block(block, size: blockSize) }
        return file
    }

    var header: [UInt8] {
        var header = [UInt8](repeating: 0, count: TraceFormat.headerSize)
        typealias At = TraceFormat.HeaderOffset
        header.replaceSubrange(0..<8, with: TraceFormat.magic)
        Self.put(UInt64(TraceFormat.version), 2, at: At.version, in: &header)
        Self.put(UInt64(TraceFormat.headerSize), 4, at: At.headerSize, in: &header)
        Self.put(UInt64(blockSize), 4, at: At.blockSize, in: &header)
        Self.put(UInt64(flags), 4, at: At.flags, in: &header)
        Self.put(pid, 8, at: At.pid, in: &header)
        Self.put(100_000, 8, at: At.calibTick1, in: &header)
        Self.put(100_000, 8, at: At.calibNs1, in: &header)
        Self.put(1_700_000_000_000_000_000, 8, at: At.realtimeNs0, in: &header)
        Self.put(drops, 8, at: At.drops, in: &header)
        Self.put(4096, 4, at: At.maxDepth, in: &header)
        let end = UInt64(TraceFormat.headerSize + blocks.count * blockSize)
        Self.put(nextBlock ?? end, 8, at: At.nextBlock, in: &header)
        Self.put(nestedDrops, 8, at: At.nestedDrops, in: &header)
        Self.put(mutingDrops, 8, at: At.mutingDrops, in: &header)
        Self.put(overheadPairTicks, 8, at: At.overheadPairTicks, in: &header)
        Self.put(overheadOwnTicks, 8, at: At.overheadOwnTicks, in: &header)
        Self.put(UInt64(lost), 4, at: At.lost, in: &header)
        Self.put(UInt64(lostErrno), 4, at: At.lostErrno, in: &header)
        Self.put(thresholdNs, 8, at: At.thresholdNs, in: &header)
        Self.put(thresholdNs, 8, at: At.thresholdTicks, in: &header)
        Self.put(schedFlags == 0 ? 0 : 2000, 4, at: At.schedPeriodUs, in: &header)
        Self.put(processStartNs, 8, at: At.processStartNs, in: &header)
        Self.put(initTick, 8, at: At.initTick, in: &header)
        Self.put(mainTick, 8, at: At.mainTick, in: &header)
        Self.put(endTick, 8, at: At.endTick, in: &header)
        Self.put(UInt64(schedFlags), 4, at: At.schedFlags, in: &header)
        Self.put(frameIntervalNs, 8, at: At.frameIntervalNs, in: &header)
        Self.put(limit, 8, at: At.limit, in: &header)
        Self.put(overwrittenBlocks, 8, at: At.overwrittenBlocks, in: &header)
        Self.put(overwrittenCalls, 8, at: At.overwrittenCalls, in: &header)
        Self.put(hangThresholdNs, 8, at: At.hangThresholdNs, in: &header)
        Self.put(UInt64(hangCount), 4, at: At.hangCount, in: &header)
        Self.put(UInt64(threadsMode), 4, at: At.threadsMode, in: &header)
        return header
    }

    static func block(_ block: Block, size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        typealias At = TraceFormat.BlockOffset
        bytes.replaceSubrange(0..<4, with: TraceFormat.blockMagic)
        put(UInt64(block.payload.count), 4, at: At.used, in: &bytes)
        put(UInt64(block.stream), 4, at: At.stream, in: &bytes)
        put(UInt64(block.flags), 4, at: At.flags, in: &bytes)
        put(block.tid, 8, at: At.tid, in: &bytes)
        put(block.seq, 8, at: At.seq, in: &bytes)
        precondition(block.payload.count <= size - TraceFormat.blockHeaderSize, "payload too large for the block")
        bytes.replaceSubrange(TraceFormat.blockHeaderSize..<(TraceFormat.blockHeaderSize + block.payload.count),
                              with: block.payload)
        return bytes
    }

    static func put(_ value: UInt64, _ size: Int, at offset: Int, in bytes: inout [UInt8]) {
        for index in 0..<size { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }

    // MARK: - Records

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        return bytes + [UInt8(value)]
    }

    static func zigzag(_ value: Int64) -> [UInt8] {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    static func string(_ bytes: [UInt8]) -> [UInt8] { varint(UInt64(bytes.count)) + bytes }
    static func string(_ text: String) -> [UInt8] { string(Array(text.utf8)) }

    static func sized(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] { [tag] + varint(UInt64(body.count)) + body }

    static func module(path: [UInt8], base: UInt64, lo: UInt64, hi: UInt64, buildID: [UInt8] = []) -> [UInt8] {
        sized(TraceFormat.Tag.module, varint(base) + varint(lo) + varint(hi) + varint(0) + string(buildID) + string(path))
    }

    static func process(executable: String, arguments: [String], omitted: UInt64? = nil) -> [UInt8] {
        var body = varint(4242) + varint(1) + string(executable) + varint(UInt64(arguments.count))
        for argument in arguments { body += string(argument) }
        if let omitted { body += varint(omitted) }
        return sized(TraceFormat.Tag.process, body)
    }

    static func thread(stream: UInt32, tid: UInt64, name: String) -> [UInt8] {
        sized(TraceFormat.Tag.thread, varint(UInt64(stream)) + varint(tid) + string(name))
    }

    static func runDelay(stream: UInt64, tid: UInt64, start: UInt64, length: UInt64, delay: UInt64) -> [UInt8] {
        sized(TraceFormat.Tag.runDelay, varint(stream) + varint(tid) + varint(start) + varint(length) + varint(delay))
    }

    /// A MARK record (`calltrace_mark_extra`); `stream` 0: the thread was not recording. They go in
    /// a stream-0 block, as the runtime writes them.
    /// What a THREAD_STATE record says the thread was doing.
    enum ThreadState {
        case running
        case syscall(number: UInt64, name: String, argument: UInt64 = 0, target: String = "")
        case kernel(wchan: String)
        case unknown
    }

    /// A THREAD_STATE record (format 4): the thread's time on a CPU and run delay so far, and its state.
    static func threadState(stream: UInt64 = 1, tid: UInt64 = 4242, tick: UInt64, cpu: UInt64, runDelay: UInt64,
                            _ state: ThreadState) -> [UInt8] {
        var body = varint(stream) + varint(tid) + varint(tick) + varint(cpu) + varint(runDelay)
        switch state {
        case .running: body += varint(TraceFormat.ThreadState.running)
        case let .syscall(number, name, argument, target):
            body += varint(TraceFormat.ThreadState.syscall) + varint(number) + string(name) + varint(argument) + string(target)
        case .kernel(let wchan): body += varint(TraceFormat.ThreadState.kernel) + string(wchan)
        case .unknown: body += varint(TraceFormat.ThreadState.unknown)
        }
        return sized(TraceFormat.Tag.threadState, body)
    }

    static func mark(_ name: String, extra: String = "", tick: UInt64, tid: UInt64 = 4242, stream: UInt64 = 1) -> [UInt8] {
        sized(TraceFormat.Tag.mark, varint(stream) + varint(tid) + varint(tick) + string(name) + string(extra))
    }

    /// A MARK_AT record (`calltrace_mark_at`): called at `tick`, for CLOCK_MONOTONIC time `ns`.
    static func markAt(_ name: String, extra: String = "", tick: UInt64, ns: UInt64, tid: UInt64 = 4242,
                       stream: UInt64 = 1) -> [UInt8] {
        sized(TraceFormat.Tag.markAt, varint(stream) + varint(tid) + varint(tick) + varint(ns) + string(name) + string(extra))
    }

    /// SPAN_BEGIN, SPAN_POINT and SPAN_END records (`calltrace_span_*`), in a stream-0 block.
    static func spanBegin(_ id: UInt64, _ name: String, extra: String = "", tick: UInt64, tid: UInt64 = 4242,
                          stream: UInt64 = 1) -> [UInt8] {
        sized(TraceFormat.Tag.spanBegin, varint(stream) + varint(tid) + varint(tick) + varint(id) + string(name) + string(extra))
    }

    static func spanPoint(_ id: UInt64, _ name: String, tick: UInt64, tid: UInt64 = 4242, stream: UInt64 = 1) -> [UInt8] {
        sized(TraceFormat.Tag.spanPoint, varint(stream) + varint(tid) + varint(tick) + varint(id) + string(name))
    }

    static func spanEnd(_ id: UInt64, tick: UInt64, tid: UInt64 = 4242, stream: UInt64 = 1) -> [UInt8] {
        sized(TraceFormat.Tag.spanEnd, varint(stream) + varint(tid) + varint(tick) + varint(id))
    }

    /// A FRAME record (`calltrace_frame`), in a stream-0 block.
    static func frame(tick: UInt64, tid: UInt64 = 4242, stream: UInt64 = 1) -> [UInt8] {
        sized(TraceFormat.Tag.frame, varint(stream) + varint(tid) + varint(tick))
    }

    /// FRAME records at `ticks`, in one stream-0 payload: `frames(at: [0, 16_666_667, 50_000_000])`.
    static func frames(at ticks: [UInt64], tid: UInt64 = 4242, stream: UInt64 = 1) -> [UInt8] {
        ticks.flatMap { frame(tick: $0, tid: tid, stream: stream) }
    }

    static func segment(stream: UInt64, tid: UInt64, seq: UInt64) -> [UInt8] {
        sized(TraceFormat.Tag.segment, varint(stream) + varint(tid) + varint(seq))
    }

    /// Writes CALL records with the format's delta state, which starts over in every block and
    /// at every SEGMENT (`reset()`).
    struct Calls {
        private var function: UInt64 = 0
        private var site: UInt64 = 0
        private var end: UInt64 = 0
        private var depth: Int64 = 0

        mutating func reset() { self = Calls() }

        mutating func call(function: UInt64, site: UInt64 = 0x1000, start: UInt64, duration: UInt64,
                           depth: Int64, flags: UInt8 = 0, descendants: UInt64 = 0) -> [UInt8] {
            var bytes = [TraceFormat.Tag.call | flags | (descendants > 0 ? TraceFormat.CallFlag.descendants : 0)]
                + SyntheticTrace.zigzag(Int64(bitPattern: function &- self.function))
                + SyntheticTrace.zigzag(Int64(bitPattern: site &- self.site))
                + SyntheticTrace.zigzag(Int64(bitPattern: start &- end))
                + SyntheticTrace.varint(duration)
                + SyntheticTrace.zigzag(depth - self.depth)
            if descendants > 0 { bytes += SyntheticTrace.varint(descendants) }
            self.function = function
            self.site = site
            end = start &+ duration
            self.depth = depth
            return bytes
        }
    }

    /// `count` calls in exit order making a chain of leaf calls under one root: a block's worth
    /// at a time is easy to spread over blocks.
    static func leafCalls(_ count: Int, startingAt start: UInt64 = 1000, function: UInt64 = 0x401000) -> [UInt8] {
        var calls = Calls()
        var bytes: [UInt8] = []
        for index in 0..<count {
            bytes += calls.call(function: function, start: start + UInt64(index) * 10, duration: 5, depth: 1)
        }
        return bytes
    }

    // MARK: - Files

    func write(named name: String) throws -> URL {
        let url = Workspace.directory("synthetic").appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }
}

/// A `TraceSource` over a real file that counts its reads and can cut the file after a number of
/// them: a file cut while it is being read, at a chosen moment.
final class WatchedTraceSource: TraceSource {
    let file: TraceFile
    private let path: String
    private let cutAfterReads: Int?
    private let cutTo: Int
    private(set) var reads = 0
    private(set) var bytesRead = 0
    private(set) var dataLookups = 0

    init(path: String, cutAfterReads: Int? = nil, cutTo: Int = 0) throws {
        self.file = try TraceFile(path: FilePath(path))
        self.path = path
        self.cutAfterReads = cutAfterReads
        self.cutTo = cutTo
    }

    var size: Int { file.size }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        reads += 1
        if reads == cutAfterReads.map({ $0 + 1 }) { _ = truncate(path, off_t(cutTo)) }
        let count = file.read(into: buffer, at: offset)
        bytesRead += count
        return count
    }

    func dataOffset(from offset: Int) -> Int? {
        dataLookups += 1
        return file.dataOffset(from: offset)
    }

    func holeOffset(from offset: Int) -> Int { file.holeOffset(from: offset) }
}
