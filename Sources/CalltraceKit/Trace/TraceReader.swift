/// Reads a trace file (docs/trace-format.md) into a `Trace`.
///
/// A file that is not a trace, or is of a newer format, throws `TraceError`. Damage after the
/// header never throws: the reader keeps every whole record it can reach and says what it
/// skipped in `Trace.warnings`. It reads with `pread`, a block at a time, and skips holes, so a
/// file cut while being read, a file with holes or a huge sparse file read in time linear in
/// their data, never with a signal.
public enum TraceReader {
    /// Which calls go to the sink: a view that shows only long calls, or only counts, need not hold
    /// every call of a multi-gigabyte trace in memory.
    public struct Options: Sendable {
        /// Calls that cost less than this are counted (`Trace.callCounts`) but not kept.
        public var minimumDuration: Nanoseconds
        /// False: keep no calls at all, only count them.
        public var keepCalls: Bool
        /// Compare the measured duration (hooks included) with `minimumDuration`, not the cost.
        public var measured: Bool
        /// Called after each block with the bytes of blocks decoded so far and in all (a progress
        /// line for big traces).
        public var progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?

        public init(minimumDuration: Nanoseconds = .zero, keepCalls: Bool = true, measured: Bool = false,
                    progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil) {
            self.minimumDuration = minimumDuration
            self.keepCalls = keepCalls
            self.measured = measured
            self.progress = progress
        }
    }

    /// Reads the file at `path`, its calls counted only (`ProfileBuilder.read` builds the profile
    /// of them). A trace that was not closed is checked against its writer: when the program is
    /// still running, the trace says so rather than that it was killed.
    public static func read(path: FilePath, options: Options = Options()) throws -> Trace {
        try read(path: path, options: options, sink: nil)
    }

    public static func read(path: String, options: Options = Options()) throws -> Trace {
        try read(path: FilePath(path), options: options)
    }

    /// Reads a trace held in memory (tests, synthetic traces, the fuzz target).
    public static func read(bytes: [UInt8], options: Options = Options()) throws -> Trace {
        try bytes.withUnsafeBytes { try read($0, options: options) }
    }

    public static func read(_ bytes: UnsafeRawBufferPointer, options: Options = Options()) throws -> Trace {
        try read(bytes, options: options, sink: nil)
    }

    /// Reads the file at `path`, handing the kept calls to `sink` in the order decoded;
    /// `Trace.pieces` says whose they are.
    static func read(path: FilePath, options: Options, sink: CallRecordSink?) throws -> Trace {
        let file = try TraceFile(path: path)
        return try read(file, options: options, sink: sink) { header in
            WriterLiveness.isRunning(pid: header.pid, mapping: (file.device, file.inode), realPath: file.realPath)
        }
    }

    /// Reads a trace held in memory, handing the kept calls to `sink`, as `read(path:options:sink:)`.
    static func read(_ bytes: UnsafeRawBufferPointer, options: Options, sink: CallRecordSink?) throws -> Trace {
        try read(MemoryTraceSource(bytes: bytes), options: options, sink: sink) { _ in false }
    }

    static func read(_ file: TraceSource, options: Options, sink: CallRecordSink? = nil,
                     isWriterRunning: (TraceHeader) -> Bool) throws -> Trace {
        let header = try readHeader(file)
        var warnings: [String] = []
        // The blocks end where a whole stored symbol table starts: everything below reads them as
        // if the file ended there, so a table changes nothing about how the blocks are read. A
        // table that does not check out cuts nothing.
        let table = storedTable(header, in: file, warnings: &warnings)
        let source: TraceSource = table.blocksEnd.map { PrefixTraceSource(base: file, size: $0) } ?? file
        let blockSize = Int(header.blockSize)
        let end = dataEnd(header, source: source, warnings: &warnings)
        var scanner = BlockScanner(source: source, blockSize: blockSize, end: end)
        scanner.skipsEmpty = header.limit != 0
        var cutAt: Int?
        let blocks = scanner.scan(warnings: &warnings, cutAt: &cutAt)

        var decoder = makeDecoder(header, options: options, sink: sink)
        // A flight recorder's events, then the metadata, each in its order (MODULE_GONE refers to
        // earlier MODULEs); then each stream's blocks in the order the streams are shown, so that
        // the sink usually gets the calls in their final order. A thread's name can be in all three,
        // and the later ones are written later (docs/trace-format.md, THREAD): the last read wins.
        let metadata = blocks.filter { TraceFormat.isRuntimeStream($0.stream) }.sorted {
            ($0.stream == 0 ? 1 : 0, $0.seq, $0.offset) < ($1.stream == 0 ? 1 : 0, $1.seq, $1.offset)
        }
        let callBlocks = blocks.filter { !TraceFormat.isRuntimeStream($0.stream) }
        let firstTid = Dictionary(callBlocks.map { ($0.stream, $0.tid) }, uniquingKeysWith: { first, _ in first })
        let progress = options.progress.map { report in
            Progress(total: blocks.reduce(0) { $0 + ($1.payloadEnd - $1.offset) }, report: report)
        }
        decodeBlocks(metadata, from: source, into: &decoder, cutAt: &cutAt, progress: progress)
        let storedSymbols = finishModules(&decoder.modules, header: header, table: table.bytes, warnings: &warnings)
        sink?.begin(header: header, modules: decoder.modules, runDelays: decoder.runDelays,
                    threadStates: decoder.threadStates)
        if let sink {
            var payloadBytes: [UInt32: Int] = [:]
            for block in callBlocks {  // the bytes there, not those a header claims
                payloadBytes[block.stream, default: 0] += max(0, min(block.used, block.payloadEnd - block.payloadStart))
            }
            sink.expect(payloadBytes: payloadBytes)
        }
        let order = streamOrder(Set(firstTid.keys), tids: firstTid, named: decoder.threads, pid: header.pid)
        let rank = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        let calls = callBlocks.sorted {
            (rank[$0.stream] ?? Int.max, $0.seq, $0.offset) < (rank[$1.stream] ?? Int.max, $1.seq, $1.offset)
        }
        decodeBlocks(calls, from: source, into: &decoder, cutAt: &cutAt, progress: progress)

        warnings += endWarnings(header, source: source, cutAt: cutAt, cutBlockOffset: scanner.cutBlockOffset)
        if blocks.isEmpty {
            warnings.append("the trace holds no blocks after its header (the file was cut short, "
                            + "or the program ended before the runtime wrote anything)")
        }
        let assembled = StreamAssembly(decoder: decoder, pid: header.pid, overwritten: header.overwrittenBlocks > 0)
        warnings += assembled.gapWarnings
        warnings += decoder.warnings.lines
        if !metadata.contains(where: { $0.stream == 0 }) && decoder.kept > 0 {
            warnings.append("the trace has no metadata block (modules, program); functions are shown as addresses")
        }
        let running = !header.closedCleanly && !header.crashed && isWriterRunning(header)
        warnings += decoder.restrictions.compactMap { $0.warning(header, clock: TickClock(header: header)) }
        warnings += RecordingNotes.lines(header: header, process: decoder.process,
                                         records: decoder.callCounts.values.reduce(0, +), stillRunning: running)
        var trace = Trace(header: header, process: decoder.process, modules: decoder.modules, threads: assembled.threads,
                          warnings: warnings)
        trace.callCounts = decoder.callCounts
        trace.runDelays = decoder.runDelays
        trace.threadStates = decoder.threadStates
        trace.isStillRunning = running
        trace.muted = decoder.muted
        trace.pieces = decoder.pieces
        // A MARK_AT's time is the caller's CLOCK_MONOTONIC time, on the trace's clock from here on.
        let clock = TickClock(header: header)
        let marks = decoder.marks + decoder.marksAt.map { entry in
            var mark = entry.mark
            mark.tick = clock.tick(monotonic: entry.monotonicNs)
            return mark
        }
        // A flight recorder writes an open span's begin and a name's latest mark again before it
        // reuses their block; a process killed in between left both copies (docs/trace-format.md).
        let once = header.limit != 0
        trace.marks = marks.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }
            .map(\.element).uniqued(if: once)
        trace.frames = decoder.frames.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }
            .map(\.element)
        trace.spanEvents = decoder.spanEvents.enumerated()
            .sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map(\.element).uniqued(if: once)
        trace.hangs = decoder.hangs
        trace.filter = decoder.filter
        trace.restrictions = decoder.restrictions
        if header.limit != 0 {
            var recording = FlightRecording(header: header, firstTick: decoder.firstCallEndTick,
                                            lastTick: decoder.lastCallEndTick)
            recording.eventsOverwritten = decoder.pieces.contains { $0.stream == TraceFormat.eventsStream && $0.seq > 0 }
                && !decoder.pieces.contains { $0.stream == TraceFormat.eventsStream && $0.seq == 0 }
            trace.flightRecorder = recording
        }
        trace.storedSymbols = storedSymbols
        return trace
    }

    /// A decoder for the trace's calls: kept as `options` say, handed to `sink`.
    private static func makeDecoder(_ header: TraceHeader, options: Options, sink: CallRecordSink?) -> RecordDecoder {
        var decoder = RecordDecoder()
        decoder.keep = options.keepCalls
        decoder.sink = sink
        // Calls whose cost falls short of the recording threshold once the final calibration is
        // applied (the runtime decided with a cautious estimate) are left out like shorter ones.
        decoder.minimumTicks = max(TickClock(header: header).ticks(in: options.minimumDuration),
                                   options.measured ? .zero : header.thresholdTicks)
        decoder.measured = options.measured
        decoder.overheadPerDescendant = header.overheadPairTicks
        decoder.overheadOwn = header.overheadOwnTicks
        decoder.overheadPerUntimed = header.overheadUntimedTicks
        return decoder
    }

    /// The modules once the metadata is read: their stored names attached (from `table`, when the
    /// trace has a sound one), and when each was loaded on the wall clock (a file modified after
    /// it was loaded is not the one the trace recorded: checked when the file has no build-id).
    private static func finishModules(_ modules: inout [TraceModule], header: TraceHeader, table: [UInt8]?,
                                      warnings: inout [String]) -> StoredSymbolsSummary? {
        let storedSymbols = table.flatMap { attachStoredSymbols($0, to: &modules, warnings: &warnings) }
        let clock = TickClock(header: header)
        for index in modules.indices {
            modules[index].seenTime = clock.unixTime(tick: modules[index].seenTick)
        }
        return storedSymbols
    }

    /// What the end of the file says: cut while being read, cut inside a block, or shorter than
    /// the header's next_block after a clean exit.
    private static func endWarnings(_ header: TraceHeader, source: TraceSource, cutAt: Int?,
                                    cutBlockOffset: Int?) -> [String] {
        if let cutAt {
            return ["the trace file was cut while being read (it ends at byte \(cutAt) now); read up to the cut"]
        } else if let cut = cutBlockOffset {
            return ["the trace file is truncated (cut inside the block at byte \(cut)); read up to the last whole record"]
        } else if header.closedCleanly, header.nextBlock > UInt64(source.size) {
            // At a clean exit the runtime sets next_block to the file's final size.
            return ["the trace file is truncated (\(source.size) of \(header.nextBlock) bytes); "
                    + "read up to the last whole block"]
        }
        return []
    }

    /// The stored symbol table (`bytes`, nil when there is none or it is damaged: then with a
    /// warning) and where the blocks end because of it (`blocksEnd`: only at a table that checks
    /// out, so that a damaged `symbols_offset` never hides blocks).
    private static func storedTable(_ header: TraceHeader, in source: TraceSource, warnings: inout [String])
        -> (bytes: [UInt8]?, blocksEnd: Int?) {
        let offset = header.symbolsOffset, length = header.symbolsSize, size = source.size
        guard offset != 0 || length != 0 else { return (nil, nil) }
        guard offset >= UInt64(TraceHeader.size), offset <= UInt64(size), length <= UInt64(size) - offset,
              length <= UInt64(TraceFormat.SymbolTable.maxSize) else {
            warnings.append("the trace's stored symbol table is damaged (\(length) bytes at byte \(offset), in a file "
                            + "of \(size) bytes); names come from the program's files")
            return (nil, nil)
        }
        let start = Int(offset)
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let got = bytes.withUnsafeMutableBytes { source.read(into: $0, at: start) }
        do {
            guard got == bytes.count else {
                throw StoredSymbolTable.Failure.damaged("\(got) of its \(bytes.count) bytes could be read")
            }
            try StoredSymbolTable.check(bytes)
        } catch {
            warnings.append("the trace's stored symbol table is damaged (\(error)); names come from the program's files")
            return (nil, nil)
        }
        return (bytes, start)
    }

    /// Gives each module the table names its symbols. A table that does not fit the trace's
    /// modules is one warning, and no module gets any: names then come from the ELF files.
    private static func attachStoredSymbols(_ bytes: [UInt8], to modules: inout [TraceModule],
                                            warnings: inout [String]) -> StoredSymbolsSummary? {
        do {
            let stored = try StoredSymbolTable.decode(bytes, modules: modules)
            for (index, symbols) in stored.modules { modules[index].storedSymbols = symbols }
            return StoredSymbolsSummary(names: stored.modules.values.reduce(0) { $0 + $1.count },
                                        hasLines: stored.hasLines, bytes: UInt64(bytes.count))
        } catch {
            warnings.append("the trace's stored symbol table is damaged (\(error)); names come from the program's files")
            return nil
        }
    }

    private static func readHeader(_ source: TraceSource) throws -> TraceHeader {
        var bytes = [UInt8](repeating: 0, count: TraceHeader.size)
        let count = bytes.withUnsafeMutableBytes { source.read(into: $0, at: 0) }
        return try bytes.withUnsafeBytes { bytes in
            var cursor = ByteCursor(bytes, end: count)
            return try TraceHeader(from: &cursor)
        }
    }

    /// Where the blocks end. The runtime never hands out a block at or past `next_block`, so
    /// reading stops there whatever the file's size says: a 100 GB file that claims 100 GB past
    /// a small trace costs nothing. The runtime may leave zeros past it (space it reserved but
    /// could not use); only something that looks like a block there gets a warning.
    private static func dataEnd(_ header: TraceHeader, source: TraceSource, warnings: inout [String]) -> Int {
        let size = source.size
        let blockSize = UInt64(header.blockSize)
        let nextBlock = header.nextBlock
        guard nextBlock >= UInt64(TraceHeader.size), (nextBlock - UInt64(TraceHeader.size)) % blockSize == 0 else {
            warnings.append("damaged trace header: next_block \(nextBlock) is not a block boundary; "
                            + "read the whole file")
            return size
        }
        guard nextBlock < UInt64(size) else { return size }
        let end = Int(nextBlock)
        if let found = blockPast(end, in: source, blockSize: Int(blockSize)) {
            warnings.append("the file goes on past the end of the trace (next_block, byte \(end)): "
                            + "something like a block at byte \(found) and \(size - end) bytes in all were ignored")
        }
        return end
    }

    /// The offset of a block-sized boundary past `end` whose first bytes are not zero, looking at
    /// a few dozen at most (holes skipped).
    private static func blockPast(_ end: Int, in source: TraceSource, blockSize: Int) -> Int? {
        var header = [UInt8](repeating: 0, count: TraceBlock.headerSize)
        var offset = end
        for _ in 0..<64 {
            guard offset < source.size, let data = source.dataOffset(from: offset) else { return nil }
            offset = data <= offset ? offset : TraceHeader.size + (data - TraceHeader.size) / blockSize * blockSize
            let count = header.withUnsafeMutableBytes { source.read(into: $0, at: offset) }
            if header[0..<count].contains(where: { $0 != 0 }) { return offset }
            offset += blockSize
        }
        return nil
    }

    /// Reads each block into one reusable buffer and decodes it. A block that reads short was
    /// cut after the scan: what is left of it is decoded, and `cutAt` says where the file ends. A
    /// hole in a block's payload (pages a full file system never backed) ends the block there: it
    /// holds no records, and a crafted block of gigabytes of holes must not be read into memory.
    private static func decodeBlocks(_ blocks: [TraceBlock], from source: TraceSource,
                                     into decoder: inout RecordDecoder, cutAt: inout Int?, progress: Progress?) {
        // The buffer grows to the largest block read, not to the largest block claimed.
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 8)
        defer { buffer.deallocate() }
        for var block in blocks {
            let hole = source.holeOffset(from: block.payloadStart)
            if hole < block.payloadEnd {
                decoder.warnings.add("block \(block.seq) of stream \(block.stream): a hole (never written) "
                                     + "at byte \(hole); read the records before it")
                block.payloadEnd = hole  // `isTruncated` now: a record cut by the hole is not news
            }
            let wanted = block.payloadEnd - block.offset
            if buffer.count < wanted {
                buffer.deallocate()
                buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: wanted, alignment: 8)
            }
            let got = source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), at: block.offset)
            if got < wanted {
                cutAt = min(cutAt ?? Int.max, block.offset + got)
                guard got > TraceBlock.headerSize else { continue }
                block.payloadEnd = block.offset + got
            }
            decoder.decode(block, bytes: UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
            progress?.advance(by: wanted)
        }
    }

    /// Bytes of blocks decoded, for `Options.progress`.
    private final class Progress {
        let total: Int
        let report: @Sendable (Int, Int) -> Void
        var done = 0

        init(total: Int, report: @escaping @Sendable (Int, Int) -> Void) {
            self.total = total
            self.report = report
        }

        func advance(by bytes: Int) {
            done += bytes
            report(done, total)
        }
    }

    /// Record streams in the order they are shown: the main thread (tid == pid) first, then by
    /// stream id. Streams named by THREAD records but without records come too, with no calls.
    static func streamOrder(_ streams: Set<UInt32>, tids: [UInt32: UInt64], named: [UInt32: ThreadInfo],
                            pid: UInt64) -> [UInt32] {
        let streams = streams.union(named.keys).subtracting([0, TraceFormat.eventsStream])
        func isMain(_ stream: UInt32) -> Bool { (named[stream]?.tid ?? tids[stream]) == pid }
        return streams.sorted { (isMain($0) ? 0 : 1, $0) < (isMain($1) ? 0 : 1, $1) }
    }
}

private extension Array where Element: Hashable {
    /// The elements without later repeats of an equal one, when `once`; else as they are.
    func uniqued(if once: Bool) -> [Element] {
        guard once else { return self }
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
