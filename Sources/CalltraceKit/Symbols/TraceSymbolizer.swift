import Glibc

/// Makes a trace self-contained: stores the names (and source lines) of every address it uses
/// into the trace file itself (docs/trace-format.md, "Stored symbols"), so that it can be read
/// after its program was rebuilt or deleted, or on another machine.
///
/// One pass over the records collects the addresses (calls' entry addresses, hang stacks, muted
/// functions, `main`); the `Symbolicator` names them from the ELF files (or from a table the
/// trace already stores: storing again keeps what an earlier run stored and the files no longer
/// know); the table is appended after the blocks, replacing an earlier one.
public enum TraceSymbolizer {
    public struct Outcome: Sendable {
        /// Addresses stored with a name or line.
        public var names: Int
        /// Addresses the trace uses.
        public var addresses: Int
        public var hasLines: Bool
        /// The table's size.
        public var bytes: Int
        public var calls: Int
        /// What the reader said about the trace (damage, an unclean exit, a damaged earlier table).
        public var warnings: [String]
    }

    public enum Failure: Error, CustomStringConvertible {
        case stillRunning(path: String, pid: UInt64)
        case cannotWrite(path: String, reason: String)
        /// The table would take a flight recorder's trace past its limit (`withinLimit`).
        case pastLimit(path: String, limit: UInt64, size: UInt64)

        public var description: String {
            switch self {
            case let .stillRunning(path, pid):
                return "\(path) is still being written (its program, pid \(pid), is running); "
                    + "store its names once the program has ended"
            case let .cannotWrite(path, reason):
                return "cannot store the names in \(path): \(reason)"
            case let .pastLimit(path, limit, size):
                return "the names are not stored in \(path): they would make it \(size) bytes, past its limit of "
                    + "\(limit) (CALLTRACE_LIMIT); views name its calls from the program's files while those exist"
            }
        }
    }

    /// Stores the table into the trace at `path`. `warn` gets the `Symbolicator`'s warnings (a
    /// module whose file is gone or changed: its addresses are stored without names).
    /// `progress` is `TraceReader.Options.progress` for the pass over the records. With
    /// `withinLimit`, a flight recorder's trace (`CALLTRACE_LIMIT`) that the table would take past
    /// its limit is left as it is (`Failure.pastLimit`): `record` keeps the promise that the file
    /// never grows past it; `symbolize`, asked by name, stores the table anyway.
    public static func symbolize(path: FilePath, lines: Bool = true, withinLimit: Bool = false,
                                 progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil,
                                 warn: @escaping (String) -> Void) throws -> Outcome {
        let collector = AddressCollector(lines: lines, warn: warn)
        // Measured times: every recorded call is kept, also those `report --raw` alone shows.
        let options = TraceReader.Options(measured: true, progress: progress)
        let trace = try TraceReader.read(path: path, options: options, sink: collector)
        if trace.isStillRunning { throw Failure.stillRunning(path: "\(path)", pid: trace.header.pid) }
        let symbolicator = collector.symbolicator ?? Symbolicator(modules: trace.modules, lines: lines, warn: warn)
        for hang in trace.hangs {
            collector.note(hang.function, atTick: hang.capturedTick)
            for pc in hang.pcs { collector.note(pc, atTick: hang.capturedTick) }
        }
        for muted in trace.muted { collector.note(muted.function, atTick: muted.mutedTick) }
        if trace.header.mainAddress != 0 { collector.note(trace.header.mainAddress, atTick: trace.header.mainTick) }

        var byModule: [Int: [(address: UInt64, symbol: StoredSymbol)]] = [:]
        let used = collector.used()
        for (address, index) in used {
            guard let symbol = symbolicator.storable(address, inModule: index) else { continue }
            byModule[index, default: []].append((address &- trace.modules[index].base, symbol))
        }
        let modules = byModule.keys.sorted().map { index in
            (index: index, module: trace.modules[index], symbols: StoredSymbols(hasLines: lines, entries: byModule[index] ?? []))
        }
        let table = StoredSymbolTable.encode(modules: modules, hasLines: lines)
        try append(table, to: path, header: trace.header, limit: withinLimit ? trace.header.limit : 0)
        return Outcome(names: modules.reduce(0) { $0 + $1.symbols.count }, addresses: used.count, hasLines: lines,
                       bytes: table.count, calls: collector.calls, warnings: trace.warnings)
    }

    /// Stores `table` in the trace file, replacing the table the header points at when that is
    /// certainly a table (a damaged `symbols_offset` is never trusted with cutting the file). At every
    /// moment the header points at a whole table or at none, each step synced before the next:
    /// the new table is written past the end, where copying it down cannot overwrite it, and the
    /// header pointed at it; then, when it replaces an earlier table at the end of the file, it is
    /// copied over that one, the header pointed there and the file cut after it (so storing again
    /// gives the same file). A failure leaves the earlier table in place and in use.
    private static func append(_ table: [UInt8], to path: FilePath, header: TraceHeader, limit: UInt64) throws {
        func failure(_ what: String) -> Failure {
            .cannotWrite(path: "\(path)", reason: "\(what): \(String(cString: strerror(errno)))")
        }
        let fd = path.withCString { open($0, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }
        guard fd >= 0 else { throw failure("open") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("stat") }
        let end = UInt64(info.st_size)
        let count = UInt64(table.count)
        // The earlier table's place is reused (the file cut after the new table) only when it is
        // certainly the table's: a whole table that ends the file, or, damaged, one that still
        // starts with the table's magic past every block (no block reaches `next_block`). A
        // damaged offset pointing anywhere else is left alone, and the new table appended.
        var earlier: UInt64?
        let (oldOffset, oldSize) = (header.symbolsOffset, header.symbolsSize)
        let magic = TraceFormat.SymbolTable.magic
        if oldOffset >= UInt64(TraceHeader.size), oldOffset < end,
           readAll(fd, count: magic.count, at: oldOffset).map({ $0.elementsEqual(magic) }) == true {
            let pastBlocks = oldOffset >= header.nextBlock
            let whole = oldSize == end - oldOffset && oldSize <= UInt64(TraceFormat.SymbolTable.maxSize)
                && readAll(fd, count: Int(oldSize), at: oldOffset).map { (try? StoredSymbolTable.check($0)) != nil } == true
            if pastBlocks || whole { earlier = oldOffset }
        }
        let final = earlier.map { $0 + count } ?? end + count
        if limit > 0 && final > limit { throw Failure.pastLimit(path: "\(path)", limit: limit, size: final) }
        let first = max(end, (earlier ?? 0) + count)
        guard writeAll(fd, table, at: first), fsync(fd) == 0 else {
            let error = failure("writing the table")
            _ = ftruncate(fd, off_t(end))
            throw error
        }
        guard writeFields(fd, offset: first, size: count), fsync(fd) == 0 else { throw failure("writing the header") }
        guard let earlier else { return }
        guard writeAll(fd, table, at: earlier), fsync(fd) == 0,
              writeFields(fd, offset: earlier, size: count), fsync(fd) == 0,
              ftruncate(fd, off_t(earlier + count)) == 0, fsync(fd) == 0 else {
            throw failure("moving the table over the one it replaces")
        }
    }

    private static func readAll(_ fd: Int32, count: Int, at offset: UInt64) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let complete = bytes.withUnsafeMutableBytes { buffer -> Bool in
            var done = 0
            while done < buffer.count {
                guard let base = buffer.baseAddress else { return false }
                let got = pread(fd, base + done, buffer.count - done, off_t(offset) + off_t(done))
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { return false }
                done += got
            }
            return true
        }
        return complete ? bytes : nil
    }

    private static func writeFields(_ fd: Int32, offset: UInt64, size: UInt64) -> Bool {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: offset.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: size.littleEndian) { bytes.append(contentsOf: $0) }
        return writeAll(fd, bytes, at: UInt64(TraceFormat.HeaderOffset.symbolsOffset))
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                guard let base = buffer.baseAddress else { return false }
                let count = pwrite(fd, base + done, buffer.count - done, off_t(offset) + off_t(done))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
    }
}

/// Collects the distinct addresses a trace's calls use, as they are read (a `CallRecordSink`):
/// a set insert per call, skipped when the call repeats the previous one's function.
final class AddressCollector: CallRecordSink {
    private let lines: Bool
    private let warn: (String) -> Void
    private(set) var symbolicator: Symbolicator?
    private(set) var calls = 0
    private var unambiguous = true
    private var addresses = Set<UInt64>()
    /// When modules shared an address range over time, the module depends on the call's end.
    private var inModules = Set<AddressInModule>()
    private var last: UInt64?

    private struct AddressInModule: Hashable {
        var address: UInt64
        var module: Int
    }

    init(lines: Bool, warn: @escaping (String) -> Void) {
        self.lines = lines
        self.warn = warn
    }

    func begin(header: TraceHeader, modules: [TraceModule], runDelays: [RunDelay], threadStates: [ThreadStateSample]) {
        let symbolicator = Symbolicator(modules: modules, lines: lines, warn: warn)
        unambiguous = symbolicator.addressesAreUnambiguous
        self.symbolicator = symbolicator
    }

    func add(_ call: CallRecord) {
        calls += 1
        note(call.function, atTick: call.endTick)
    }

    func note(_ address: UInt64, atTick tick: Ticks) {
        if unambiguous {
            guard address != last else { return }
            last = address
            addresses.insert(address)
        } else if let module = symbolicator?.moduleIndex(holding: address, atTick: tick) {
            inModules.insert(AddressInModule(address: address, module: module))
        }
    }

    /// Each address with the module it is in (addresses in no module have nothing to store).
    func used() -> [(address: UInt64, module: Int)] {
        guard let symbolicator else { return [] }
        var result = inModules.map { ($0.address, $0.module) }
        for address in addresses {
            if let module = symbolicator.moduleIndex(holding: address, atTick: .zero) { result.append((address, module)) }
        }
        return result.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
    }
}
