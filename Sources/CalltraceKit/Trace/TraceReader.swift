/// Reads a trace file (docs/trace-format.md) into a `Trace`.
///
/// A file that is not a trace, or is of a newer format, throws `TraceError`. Damage after the
/// header never throws: the reader keeps every whole record it can reach and says what it
/// skipped in `Trace.warnings`.
public enum TraceReader {
    /// Reads the file at `path` through a read-only memory mapping.
    /// What to keep of the calls: a view that shows only long calls, or only counts, need not hold
    /// every call of a multi-gigabyte trace in memory.
    public struct Options: Sendable {
        /// Calls shorter than this are counted (`Trace.callCounts`) but not kept in `records`.
        public var minimumDuration: Nanoseconds
        /// False: keep no calls at all, only count them.
        public var keepCalls: Bool

        public init(minimumDuration: Nanoseconds = .zero, keepCalls: Bool = true) {
            self.minimumDuration = minimumDuration
            self.keepCalls = keepCalls
        }
    }

    public static func read(path: String, options: Options = Options()) throws -> Trace {
        let file = try MappedFile(path: path)
        return try withExtendedLifetime(file) { try read(file.bytes, options: options) }
    }

    /// Reads a trace held in memory (tests, synthetic traces).
    public static func read(bytes: [UInt8], options: Options = Options()) throws -> Trace {
        try bytes.withUnsafeBytes { try read($0, options: options) }
    }

    public static func read(_ bytes: UnsafeRawBufferPointer, options: Options = Options()) throws -> Trace {
        var cursor = ByteCursor(bytes)
        let header = try TraceHeader(from: &cursor)
        var warnings: [String] = []
        let scanner = BlockScanner(bytes: bytes, blockSize: Int(header.blockSize))
        let blocks = scanner.scan(warnings: &warnings)
        if let cut = scanner.cutBlockOffset {
            warnings.append("the trace file is truncated (cut inside the block at byte \(cut)); "
                            + "read up to the last whole record")
        } else if header.closedCleanly, header.nextBlock > UInt64(bytes.count) {
            // At a clean exit the runtime sets next_block to the file's final size.
            warnings.append("the trace file is truncated (\(bytes.count) of \(header.nextBlock) bytes); "
                            + "read up to the last whole block")
        }
        if blocks.isEmpty {
            warnings.append("the trace holds no blocks after its header (the file was cut short, "
                            + "or the program ended before the runtime wrote anything)")
        }
        let byStream = Dictionary(grouping: blocks, by: \.stream).mapValues { blocks in
            blocks.sorted { ($0.seq, $0.offset) < ($1.seq, $1.offset) }
        }
        warnings += gapWarnings(byStream)

        var decoder = RecordDecoder(bytes: bytes)
        decoder.keep = options.keepCalls
        decoder.minimumTicks = TickClock(header: header).ticks(in: options.minimumDuration)
        // A CALL record takes at least 6 bytes. Reserving for the worst case touches no memory
        // beyond what is filled (large allocations are mapped lazily), and saves the copies
        // and the doubled peak of growing a ten-million-element array; past 16M records the
        // array grows as usual (a reservation the size of a huge trace could fail outright).
        let payload = blocks.reduce(0) { $0 + ($1.stream == 0 ? 0 : $1.payloadEnd - $1.payloadStart) }
        if options.keepCalls && options.minimumDuration == .zero { decoder.records.reserveCapacity(min(payload / 6, 1 << 24)) }
        for block in byStream[0] ?? [] { decoder.decode(block) }

        var threads: [ThreadInfo] = []
        var ranges: [UInt32: Range<Int>] = [:]
        for stream in streamOrder(byStream, named: decoder.threads, pid: header.pid) {
            let start = decoder.records.count
            for block in byStream[stream] ?? [] { decoder.decode(block) }
            ranges[stream] = start..<decoder.records.count
            let tid = byStream[stream]?.first?.tid ?? 0
            threads.append(decoder.threads[stream] ?? ThreadInfo(stream: stream, tid: tid))
        }
        warnings += decoder.warnings
        if byStream[0] == nil && !decoder.records.isEmpty {
            warnings.append("the trace has no metadata block (modules, program); functions are shown as addresses")
        }
        if let note = exitNote(header, records: decoder.callCounts.values.reduce(0, +)) { warnings.append(note) }
        if header.drops > 0 {
            warnings.append("\(header.drops) calls were dropped because the trace buffer was full "
                            + "(record with a larger --buffer)")
        }
        if header.nestedDrops > 0 {
            warnings.append("\(header.nestedDrops) calls were dropped because a signal handler ran while "
                            + "their thread was writing a record")
        }
        let clock = TickClock(header: header)
        let modules = decoder.modules.map { module in
            var module = module
            module.seenTime = clock.unixTime(tick: module.seenTick)
            return module
        }
        var trace = Trace(header: header, process: decoder.process, modules: modules,
                          threads: threads, records: decoder.records, streamRanges: ranges, warnings: warnings)
        trace.callCounts = decoder.callCounts
        return trace
    }

    /// Record streams in the order they are shown: the main thread (tid == pid) first, then by
    /// stream id. Streams named by THREAD records but without blocks come too, with no calls.
    private static func streamOrder(_ byStream: [UInt32: [TraceBlock]], named: [UInt32: ThreadInfo],
                                    pid: UInt64) -> [UInt32] {
        let streams = Set(byStream.keys).union(named.keys).subtracting([0])
        func isMain(_ stream: UInt32) -> Bool {
            (named[stream]?.tid ?? byStream[stream]?.first?.tid) == pid
        }
        return streams.sorted { (isMain($0) ? 0 : 1, $0) < (isMain($1) ? 0 : 1, $1) }
    }

    private static func gapWarnings(_ byStream: [UInt32: [TraceBlock]]) -> [String] {
        byStream.keys.sorted().compactMap { stream in
            guard let blocks = byStream[stream] else { return nil }
            let missing = blocks.enumerated().filter { UInt64($0.offset) != $0.element.seq }.count
            guard missing > 0 || blocks.count != Set(blocks.map(\.seq)).count else { return nil }
            return "stream \(stream) has missing or repeated blocks; some calls may be lost or misplaced"
        }
    }

    private static func exitNote(_ header: TraceHeader, records: Int) -> String? {
        if header.crashed {
            return "the program crashed (signal \(header.signal)); showing \(records) records written before that"
        }
        if !header.closedCleanly {
            return "the trace was not closed cleanly (the program was killed or crashed); "
                + "showing \(records) records written before that"
        }
        return nil
    }
}
