/// Decodes block payloads into calls and metadata (docs/trace-format.md, "Records").
struct RecordDecoder {
    static let callKind: UInt8 = 1
    static let moduleTag: UInt8 = 0x81
    static let moduleGoneTag: UInt8 = 0x82
    static let processTag: UInt8 = 0x83
    static let threadTag: UInt8 = 0x84

    let bytes: UnsafeRawBufferPointer
    var records: [CallRecord] = []
    /// CALL records read per stream, kept or not.
    var callCounts: [UInt32: Int] = [:]
    /// Calls shorter than this are counted but not kept; `keep` false keeps none.
    var minimumTicks: UInt64 = 0
    var keep = true
    var modules: [TraceModule] = []
    var process: TracedProcess?
    /// From THREAD records, by stream; the last one wins.
    var threads: [UInt32: ThreadInfo] = [:]
    var warnings: [String] = []

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The delta state of CALL records, reset at the start of every block.
    private struct Previous {
        var function: UInt64 = 0
        var site: UInt64 = 0
        var end: UInt64 = 0
        var depth: Int64 = 0
    }

    mutating func decode(_ block: TraceBlock) {
        var cursor = ByteCursor(bytes, start: block.payloadStart, end: block.payloadEnd)
        var previous = Previous()
        var calls = 0
        defer { callCounts[block.stream, default: 0] += calls }
        while !cursor.isAtEnd {
            let recordStart = cursor.offset
            do {
                let tag = try cursor.readU8()
                if tag & 0x80 != 0 {
                    try decodeSized(tag: tag, from: &cursor, block: block)
                } else if tag & 0x0f == RecordDecoder.callKind {
                    let call = try decodeCall(tag: tag, from: &cursor, previous: &previous, stream: block.stream)
                    calls += 1
                    if keep && call.durationTicks >= minimumTicks { records.append(call) }
                } else {
                    warnings.append("\(describe(block)): unknown record kind 0x\(String(tag, radix: 16)) "
                                    + "at byte \(recordStart); skipped the rest of the block")
                    return
                }
            } catch {
                // A cut file ends mid-record; the reader's truncation warning covers that.
                if case ByteCursorError.outOfRange = error, block.isTruncated { return }
                do {
                    warnings.append("\(describe(block)): damaged record at byte \(recordStart) (\(error)); "
                                    + "kept the records before it")
                }
                return
            }
        }
    }

    private func describe(_ block: TraceBlock) -> String {
        "block \(block.seq) of stream \(block.stream)"
    }

    private func decodeCall(tag: UInt8, from cursor: inout ByteCursor, previous: inout Previous,
                            stream: UInt32) throws -> CallRecord {
        let function = previous.function &+ UInt64(bitPattern: try cursor.readZigzag())
        let site = previous.site &+ UInt64(bitPattern: try cursor.readZigzag())
        let start = previous.end &+ UInt64(bitPattern: try cursor.readZigzag())
        let duration = try cursor.readVarint()
        let depthOffset = cursor.offset
        let (depth, overflow) = previous.depth.addingReportingOverflow(try cursor.readZigzag())
        guard !overflow, let depth32 = UInt32(exactly: depth), depth32 <= CallRecord.maxDepth else {
            throw RecordError.badDepth(offset: depthOffset)
        }
        previous = Previous(function: function, site: site, end: start &+ duration, depth: depth)
        return CallRecord(function: function, callSite: site, startTick: start, durationTicks: duration,
                          depth: depth32, stream: stream, flags: tag & 0x70)
    }

    private mutating func decodeSized(tag: UInt8, from cursor: inout ByteCursor, block: TraceBlock) throws {
        let length = try cursor.readVarint()
        guard length <= UInt64(cursor.remaining) else {
            throw ByteCursorError.outOfRange(offset: cursor.offset, needed: Int(clamping: length), end: cursor.end)
        }
        var body = ByteCursor(bytes, start: cursor.offset, end: cursor.offset + Int(length))
        try cursor.skip(Int(length))
        do {
            try decodeMetadata(tag: tag, from: &body)
        } catch {
            // The length was sound, so the next record is still found: skip just this one.
            warnings.append("\(describe(block)): damaged record 0x\(String(tag, radix: 16)) "
                            + "at byte \(body.offset) (\(error)); skipped it")
        }
    }

    private mutating func decodeMetadata(tag: UInt8, from body: inout ByteCursor) throws {
        switch tag {
        case RecordDecoder.moduleTag:
            let base = try body.readVarint()
            let lo = try body.readVarint()
            let hi = try body.readVarint()
            let seen = try body.readVarint()
            let buildID = try body.readBytes()
            let path = try body.readString()
            modules.append(TraceModule(path: path, base: base, lo: lo, hi: hi, buildID: buildID, seenTick: seen))
        case RecordDecoder.moduleGoneTag:
            let base = try body.readVarint()
            let lo = try body.readVarint()
            let tick = try body.readVarint()
            if let index = modules.lastIndex(where: { $0.base == base && $0.lo == lo && $0.goneTick == nil }) {
                modules[index].goneTick = tick
            }
        case RecordDecoder.processTag:
            let pid = try body.readVarint()
            let ppid = try body.readVarint()
            let executable = try body.readString()
            let argc = try body.readVarint()
            var arguments: [String] = []
            // Each argument takes at least one byte, so a huge argc fails on reading, not on memory.
            for _ in 0..<min(argc, UInt64(body.remaining)) { arguments.append(try body.readString()) }
            guard UInt64(arguments.count) == argc else { throw RecordError.badCount(argc) }
            process = TracedProcess(pid: pid, ppid: ppid, executable: executable, arguments: arguments)
        case RecordDecoder.threadTag:
            let stream = try body.readVarint()
            let tid = try body.readVarint()
            let name = try body.readString()
            guard let stream32 = UInt32(exactly: stream) else { throw RecordError.badStream(stream) }
            threads[stream32] = ThreadInfo(stream: stream32, tid: tid, name: name)
        default:
            break  // A sized kind from a newer writer: skipping it is the point of sized records.
        }
    }
}

/// Values that decode but make no sense.
enum RecordError: Error, CustomStringConvertible {
    case badDepth(offset: Int)
    case badCount(UInt64)
    case badStream(UInt64)

    var description: String {
        switch self {
        case let .badDepth(offset): return "depth out of range at byte \(offset)"
        case let .badCount(count): return "argument count \(count) does not match the record"
        case let .badStream(stream): return "stream id \(stream) out of range"
        }
    }
}
