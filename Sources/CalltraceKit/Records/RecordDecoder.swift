/// Where a reader hands the calls it keeps, in the order decoded (`Trace.pieces` says whose they
/// are): the reader never holds them, so a profile built while the trace is read never has two
/// copies of ten million calls in memory.
protocol CallRecordSink: AnyObject {
    /// Before the first call: the header and the metadata (read before any call).
    func begin(header: TraceHeader, modules: [TraceModule], runDelays: [RunDelay], threadStates: [ThreadStateSample])
    /// After `begin`: the payload bytes of each stream's blocks, from their headers (a hint: a
    /// block's SEGMENT may hand records to another stream), so room can be made before the calls.
    func expect(payloadBytes: [UInt32: Int])
    func add(_ call: CallRecord)
    /// The calls that follow, up to the next `piece`, are `stream`'s; `tid` is its thread as far
    /// as the trace has said so far.
    func piece(stream: UInt32, tid: UInt64)
}

extension CallRecordSink {
    func piece(stream: UInt32, tid: UInt64) {}
}

extension CallRecordSink {
    func expect(payloadBytes: [UInt32: Int]) {}
}

/// Decodes blocks into calls and metadata (docs/trace-format.md, "Records"), one block at a
/// time, and splits them into pieces: the records before a block's first SEGMENT belong to the
/// stream its header names, those after a SEGMENT to the stream that SEGMENT names.
struct RecordDecoder {
    /// Takes the kept calls, in the order decoded; `pieces` says whose they are. Without a sink
    /// the calls are only counted.
    var sink: CallRecordSink?
    /// Calls kept so far (given to `sink`): pieces' `records` ranges count these.
    private(set) var kept = 0
    var pieces: [TracePiece] = []
    /// CALL records read per stream, kept or not.
    var callCounts: [UInt32: Int] = [:]
    /// The earliest and latest end of every CALL read, kept or not: records are written as calls
    /// end, so a trace whose oldest blocks were reused holds the calls that ended between them.
    private(set) var firstCallEndTick: Ticks?
    private(set) var lastCallEndTick: Ticks?
    /// Calls shorter than this are counted but not kept; `keep` false keeps none.
    var minimumTicks = Ticks.zero
    /// Compare the measured duration with `minimumTicks`, not the cost (`report --raw`).
    var measured = false
    /// The header's calibrated hook costs (zero in traces without compensation).
    var overheadPerDescendant = Ticks.zero
    var overheadOwn = Ticks.zero
    var overheadPerUntimed = Ticks.zero
    var keep = true
    var modules: [TraceModule] = []
    var process: TracedProcess?
    /// From THREAD records, by stream; the last one wins.
    var threads: [UInt32: ThreadInfo] = [:]
    /// From MUTED records, in the order first muted; a later record for a function replaces it.
    var muted: [MutedFunction] = []
    /// RUN_DELAY records, in the order read.
    var runDelays: [RunDelay] = []
    /// THREAD_STATE records, in the order read.
    var threadStates: [ThreadStateSample] = []
    /// MARK and FRAME records, in the order read.
    var marks: [TraceMark] = []
    var frames: [TraceFrame] = []
    /// MARK_AT records: marks with the CLOCK_MONOTONIC time the program gave (`TraceReader` turns
    /// it into the mark's tick with the header's calibration).
    var marksAt: [(mark: TraceMark, monotonicNs: UInt64)] = []
    /// SPAN_BEGIN, SPAN_POINT and SPAN_END records, in the order read.
    var spanEvents: [TraceSpanEvent] = []
    /// From HANG records, in the order written.
    var hangs: [TraceHang] = []
    /// The FILTER record (the last one, should a writer repeat it).
    var filter: TraceFilter?
    var restrictions: [TraceRestriction] = []
    var warnings = WarningList()
    /// Every (stream, seq) a piece has had so far: a SEGMENT may not repeat one.
    private var seen: Set<PieceKey> = []

    private struct PieceKey: Hashable {
        var stream: UInt32
        var seq: UInt64
    }

    /// The delta state of CALL records, reset at the start of every block and every SEGMENT.
    private struct Previous {
        var function: UInt64 = 0
        var site: UInt64 = 0
        var end: UInt64 = 0
        var depth: Int64 = 0
    }

    /// The piece being read: where it started, in the block and among the kept calls.
    private struct OpenPiece {
        var stream: UInt32
        var tid: UInt64
        var seq: UInt64
        var firstByte: Int
        var firstRecord: Int
        var calls = 0
    }

    /// Decodes `block`, whose bytes (from its header on) are `bytes`: `bytes[0]` is file offset
    /// `block.offset`, and the payload present is `bytes[32..<(block.payloadEnd - block.offset)]`.
    mutating func decode(_ block: TraceBlock, bytes: UnsafeRawBufferPointer) {
        let end = block.payloadEnd - block.offset
        var cursor = ByteCursor(bytes, start: TraceFormat.blockHeaderSize, end: end)
        var previous = Previous()
        var piece = OpenPiece(stream: block.stream, tid: block.tid, seq: block.seq,
                              firstByte: cursor.offset, firstRecord: kept)
        sink?.piece(stream: piece.stream, tid: threads[piece.stream]?.tid ?? piece.tid)
        var sawSegment = false
        // The block's own piece counts even when empty (a block that was never written to); a
        // piece before a SEGMENT only when it holds something.
        defer { close(piece, at: cursor.offset, always: !sawSegment, blockOffset: block.offset) }
        while !cursor.isAtEnd {
            let recordStart = cursor.offset
            do {
                let tag = try cursor.readU8()
                let kind = tag & (TraceFormat.Tag.sizedBit | TraceFormat.Tag.compactKindMask)
                if kind == TraceFormat.Tag.call || kind == TraceFormat.Tag.callUntimed {
                    // The runtime's streams (metadata, events) hold no calls: one there is damage (a
                    // block header or SEGMENT whose stream was hit), and no thread could show it.
                    if TraceFormat.isRuntimeStream(piece.stream) {
                        warnings.add("\(describe(block)): a call record in the "
                                     + "\(piece.stream == 0 ? "metadata" : "events") stream at byte "
                                     + "\(block.offset + recordStart); skipped the rest of the block")
                        return
                    }
                    let call = try decodeCall(tag: tag, from: &cursor, previous: &previous, stream: piece.stream,
                                              blockOffset: block.offset)
                    piece.calls += 1
                    let end = call.startTick.count &+ call.durationTicks.count
                    if firstCallEndTick.map({ end < $0.count }) ?? true { firstCallEndTick = Ticks(end) }
                    if lastCallEndTick.map({ end > $0.count }) ?? true { lastCallEndTick = Ticks(end) }
                    // A cost is kept when, with its uncertainty (half the overhead taken out:
                    // ProfileThread.costUncertainty), it may reach the threshold: an overhead
                    // estimate too high must not make a call of a recursion vanish.
                    let reach = measured ? call.durationTicks.count : call.costTicks.count + call.overheadTicks.count / 2
                    if keep && reach >= minimumTicks.count {
                        sink?.add(call)
                        kept += 1
                    }
                } else if tag == TraceFormat.Tag.segment {
                    let body = try sizedBody(from: &cursor)
                    let open = PieceKey(stream: piece.stream, seq: piece.seq)
                    let openHasRecords = recordStart > piece.firstByte
                    guard let next = segment(body, block: block, at: recordStart, after: openHasRecords ? open : nil)
                    else { return }
                    close(piece, at: recordStart, always: false, blockOffset: block.offset)
                    sawSegment = true
                    piece = OpenPiece(stream: next.stream, tid: next.tid, seq: next.seq,
                                      firstByte: cursor.offset, firstRecord: kept)
                    sink?.piece(stream: piece.stream, tid: threads[piece.stream]?.tid ?? piece.tid)
                    previous = Previous()
                } else if tag & TraceFormat.Tag.sizedBit != 0 {
                    var body = try sizedBody(from: &cursor)
                    do {
                        try decodeMetadata(tag: tag, from: &body)
                    } catch {
                        // The length was sound, so the next record is still found: skip just this one.
                        warnings.add("\(describe(block)): damaged record \(TextFormat.hex(tag)) "
                                     + "at byte \(block.offset + recordStart) (\(error)); skipped it")
                    }
                } else {
                    warnings.add("\(describe(block)): unknown record kind \(TextFormat.hex(tag)) "
                                 + "at byte \(block.offset + recordStart); skipped the rest of the block")
                    return
                }
            } catch {
                // A cut file ends mid-record; the reader's truncation warning covers that.
                if case ByteCursorError.outOfRange = error, block.isTruncated { return }
                warnings.add("\(describe(block)): damaged record at byte \(block.offset + recordStart) "
                             + "(\(error)); kept the records before it")
                return
            }
        }
    }

    /// Ends `piece` at byte `end` of its block.
    private mutating func close(_ piece: OpenPiece, at end: Int, always: Bool, blockOffset: Int) {
        guard always || end > piece.firstByte else { return }
        callCounts[piece.stream, default: 0] += piece.calls
        seen.insert(PieceKey(stream: piece.stream, seq: piece.seq))
        pieces.append(TracePiece(stream: piece.stream, tid: piece.tid, seq: piece.seq, blockOffset: blockOffset,
                                 records: piece.firstRecord..<kept))
    }

    /// The stream, thread and position a SEGMENT record starts; nil (with a warning) when the
    /// SEGMENT is impossible, which makes the rest of the block unreadable. `open` is the piece
    /// the SEGMENT ends, when it holds records.
    private mutating func segment(_ body: ByteCursor, block: TraceBlock, at start: Int, after open: PieceKey?)
        -> (stream: UInt32, tid: UInt64, seq: UInt64)? {
        var body = body
        let problem: String
        do {
            let stream = try body.readVarint()
            let tid = try body.readVarint()
            let seq = try body.readVarint()
            if let stream32 = UInt32(exactly: stream), !TraceFormat.isRuntimeStream(stream32) {
                let key = PieceKey(stream: stream32, seq: seq)
                if key != open && !seen.contains(key) { return (stream32, tid, seq) }
                problem = "repeats piece \(seq) of stream \(stream)"
            } else {
                problem = "names stream \(stream)"
            }
        } catch {
            problem = "is damaged (\(error))"
        }
        warnings.add("\(describe(block)): the SEGMENT record at byte \(block.offset + start) \(problem); "
                     + "skipped the rest of the block")
        return nil
    }

    private func describe(_ block: TraceBlock) -> String {
        "block \(block.seq) of stream \(block.stream)"
    }

    /// The body of a sized record: its varint length, checked against what the block holds.
    private func sizedBody(from cursor: inout ByteCursor) throws -> ByteCursor {
        let length = try cursor.readVarint()
        guard length <= UInt64(cursor.remaining) else {
            throw ByteCursorError.outOfRange(offset: cursor.offset, needed: Int(clamping: length), end: cursor.end)
        }
        let body = ByteCursor(cursor.bytes, start: cursor.offset, end: cursor.offset + Int(length))
        try cursor.skip(Int(length))
        return body
    }

    private func decodeCall(tag: UInt8, from cursor: inout ByteCursor, previous: inout Previous,
                            stream: UInt32, blockOffset: Int) throws -> CallRecord {
        let function = previous.function &+ UInt64(bitPattern: try cursor.readZigzag())
        let site = previous.site &+ UInt64(bitPattern: try cursor.readZigzag())
        let start = previous.end &+ UInt64(bitPattern: try cursor.readZigzag())
        let duration = try cursor.readVarint()
        let depthOffset = cursor.offset
        let (depth, overflow) = previous.depth.addingReportingOverflow(try cursor.readZigzag())
        guard !overflow, let depth32 = UInt32(exactly: depth), depth32 <= CallRecord.maxDepth else {
            throw RecordError.badDepth(offset: blockOffset + depthOffset)
        }
        let descendants = tag & TraceFormat.CallFlag.descendants != 0 ? try cursor.readVarint() : 0
        let untimed = tag & TraceFormat.Tag.compactKindMask == TraceFormat.Tag.callUntimed ? try cursor.readVarint() : 0
        // The hooks' overhead inside the call: each timed descendant's, each untimed one's, and part
        // of its own.
        let (timedPart, tooMany) = descendants.multipliedReportingOverflow(by: overheadPerDescendant.count)
        let (untimedPart, tooManyUntimed) = untimed.multipliedReportingOverflow(by: overheadPerUntimed.count)
        let (sum, tooMuch) = timedPart.addingReportingOverflow(untimedPart)
        let overhead = tooMany || tooManyUntimed || tooMuch ? UInt64.max
            : sum.addingReportingOverflow(overheadOwn.count).partialValue
        previous = Previous(function: function, site: site, end: start &+ duration, depth: depth)
        return CallRecord(function: function, callSite: site, startTick: Ticks(start), durationTicks: Ticks(duration),
                          depth: depth32, stream: stream, flags: tag & TraceFormat.CallFlag.mask,
                          overheadTicks: Ticks(min(overhead, duration)))
    }

    /// A sized record other than SEGMENT: each record type decodes its own body; here it is filed.
    private mutating func decodeMetadata(tag: UInt8, from body: inout ByteCursor) throws {
        typealias Tag = TraceFormat.Tag
        switch tag {
        case Tag.module: modules.append(try TraceModule(from: &body))
        case Tag.moduleGone: unload(try TraceModule.Gone(from: &body))
        case Tag.process: process = try TracedProcess(from: &body)
        case Tag.thread:
            let thread = try ThreadInfo(from: &body)
            threads[thread.stream] = thread
        case Tag.muted: mute(try MutedFunction(from: &body))
        case Tag.runDelay: runDelays.append(try RunDelay(from: &body))
        case Tag.threadState: threadStates.append(try ThreadStateSample(from: &body))
        case Tag.mark: marks.append(try TraceMark(from: &body))
        case Tag.markAt: marksAt.append(try TraceMark.decodeAt(from: &body))
        case Tag.frame: frames.append(try TraceFrame(from: &body))
        case Tag.hang: hangs.append(try TraceHang(from: &body))
        case Tag.filter: filter = try TraceFilter(from: &body)
        case Tag.restricted: restrictions.append(try TraceRestriction(from: &body))
        case Tag.spanBegin, Tag.spanPoint, Tag.spanEnd: spanEvents.append(try TraceSpanEvent(tag: tag, from: &body))
        default: break  // A sized kind from a newer writer: skipping it is the point of sized records.
        }
    }

    /// Marks the latest load of the module unloaded as gone, when the trace has it.
    private mutating func unload(_ gone: TraceModule.Gone) {
        if let index = modules.lastIndex(where: { $0.base == gone.base && $0.lo == gone.lo && $0.goneTick == nil }) {
            modules[index].goneTick = gone.tick
        }
    }

    /// A later record for a function replaces the earlier one, in its place.
    private mutating func mute(_ entry: MutedFunction) {
        if let index = muted.firstIndex(where: { $0.function == entry.function }) {
            muted[index] = entry
        } else {
            muted.append(entry)
        }
    }
}

/// A run of one stream's records: a whole block, or the part of a shared block before its first
/// SEGMENT record or after one. A stream's pieces are read in `seq` order.
struct TracePiece {
    var stream: UInt32
    var tid: UInt64
    var seq: UInt64
    /// File offset of the block the piece is in.
    var blockOffset: Int
    /// The piece's kept calls, counted in the order the sink got them.
    var records: Range<Int>

    /// A stream's pieces in the order its calls were written: by `seq`, then by where their
    /// block is (a repeated `seq`, in a damaged trace). The one ordering of a stream's calls.
    static func inWrittenOrder(_ pieces: [TracePiece]) -> [TracePiece] {
        writtenOrder(pieces).map { pieces[$0] }
    }

    /// The indexes of `pieces` in the order written.
    static func writtenOrder(_ pieces: [TracePiece]) -> [Int] {
        pieces.indices.sorted { (pieces[$0].seq, pieces[$0].blockOffset) < (pieces[$1].seq, pieces[$1].blockOffset) }
    }
}

extension Trace {
    /// Did every stream's calls come in the order written? Views made while the trace is read
    /// (`ReportJSONLStream`, `FoldedExportStream`) assume so; when blocks shared through SEGMENT
    /// records were decoded out of it, they leave the view to a whole profile.
    var cameInWrittenOrder: Bool {
        var last: [UInt32: (seq: UInt64, blockOffset: Int)] = [:]
        for piece in pieces.sorted(by: { $0.records.lowerBound < $1.records.lowerBound }) where !piece.records.isEmpty {
            if let previous = last[piece.stream], !(previous < (piece.seq, piece.blockOffset)) { return false }
            last[piece.stream] = (piece.seq, piece.blockOffset)
        }
        return true
    }
}

/// Values that decode but make no sense.
enum RecordError: Error, CustomStringConvertible {
    case badDepth(offset: Int)
    case badCount(UInt64)
    case badStream(UInt64)
    case badPCCount(UInt64)

    var description: String {
        switch self {
        case let .badDepth(offset): return "depth out of range at byte \(offset)"
        case let .badCount(count): return "argument count \(count) does not match the record"
        case let .badStream(stream): return "stream id \(stream) out of range"
        case let .badPCCount(count): return "\(count) stack addresses, more than the record holds"
        }
    }
}
