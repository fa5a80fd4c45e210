/// What the trace's stored symbol table says about one address (docs/trace-format.md, "Stored
/// symbols"): the raw symbol name as the ELF file has it (demangled when shown), and the source
/// file and line when they were looked up and known.
public struct StoredSymbol: Equatable, Sendable {
    /// Raw (mangled) name; empty when the file had a line but no symbol for the address.
    public var name: String
    public var file: String?
    public var line: Int?

    public init(name: String, file: String? = nil, line: Int? = nil) {
        self.name = name
        self.file = file
        self.line = line
    }
}

/// One module's stored symbols, by ELF virtual address (run-time address - base), sorted.
public struct StoredSymbols: Equatable, Sendable {
    /// Files and lines were looked up when the table was written: an entry without them has none.
    public var hasLines: Bool
    public private(set) var addresses: [UInt64]
    public private(set) var symbols: [StoredSymbol]

    /// `entries` in any order; an address given twice keeps its last symbol.
    public init(hasLines: Bool, entries: [(address: UInt64, symbol: StoredSymbol)]) {
        self.hasLines = hasLines
        var byAddress: [UInt64: StoredSymbol] = [:]
        for entry in entries { byAddress[entry.address] = entry.symbol }
        let sorted = byAddress.sorted { $0.key < $1.key }
        addresses = sorted.map(\.key)
        symbols = sorted.map(\.value)
    }

    public var count: Int { addresses.count }

    /// The symbol stored for exactly `address` (an ELF virtual address), if any.
    public func symbol(at address: UInt64) -> StoredSymbol? {
        var low = 0
        var high = addresses.count
        while low < high {
            let mid = (low + high) / 2
            if addresses[mid] < address { low = mid + 1 } else { high = mid }
        }
        guard low < addresses.count, addresses[low] == address else { return nil }
        return symbols[low]
    }
}

/// What `calltrace info` says about a trace's stored symbol table.
public struct StoredSymbolsSummary: Equatable, Sendable {
    /// Addresses with a stored name, all modules.
    public var names: Int
    public var hasLines: Bool
    /// The table's size in the file.
    public var bytes: UInt64
}

/// Encodes and decodes the stored symbol table (docs/trace-format.md, "Stored symbols").
///
/// Decoding checks every count and offset against the bytes there are: a damaged or crafted table
/// is an error value (the reader warns and names from the ELF files), never a trap or a huge
/// allocation.
public enum StoredSymbolTable {
    public enum Failure: Error, CustomStringConvertible, Equatable {
        case damaged(String)

        public var description: String {
            switch self {
            case let .damaged(reason): return reason
            }
        }
    }

    /// The table for `modules` (the trace's, in its order), each with the symbols to store.
    public static func encode(modules: [(index: Int, module: TraceModule, symbols: StoredSymbols)],
                              hasLines: Bool) -> [UInt8] {
        var files: [String: Int] = [:]
        var fileList: [String] = []
        for entry in modules {
            for symbol in entry.symbols.symbols {
                if let file = symbol.file, files[file] == nil {
                    files[file] = fileList.count
                    fileList.append(file)
                }
            }
        }
        var body = Encoder()
        body.varint(UInt64(fileList.count))
        for file in fileList { body.data(Array(file.utf8)) }
        body.varint(UInt64(modules.count))
        for entry in modules {
            body.varint(UInt64(entry.index))
            body.varint(entry.module.base)
            body.varint(entry.module.lo)
            body.varint(entry.module.hi)
            body.data(entry.module.buildID)
            body.data(entry.module.pathBytes)
            body.varint(UInt64(entry.symbols.count))
            var previous: UInt64 = 0
            for (address, symbol) in zip(entry.symbols.addresses, entry.symbols.symbols) {
                body.varint(address - previous)
                previous = address
                body.data(Array(symbol.name.utf8))
                body.varint(symbol.file.flatMap { files[$0] }.map { UInt64($0) + 1 } ?? 0)
                body.varint(symbol.line.map { UInt64(clamping: $0) } ?? 0)
            }
        }
        var table = Encoder()
        table.bytes.append(contentsOf: TraceFormat.SymbolTable.magic)
        table.u32(TraceFormat.SymbolTable.version)
        table.u32(hasLines ? TraceFormat.SymbolTable.linesFlag : 0)
        table.u64(UInt64(body.bytes.count))
        table.u64(checksum(body.bytes))
        return table.bytes + body.bytes
    }

    /// A decoded table: the stored symbols of each module index it names, and whether it looked
    /// lines up.
    public struct Decoded {
        public var modules: [Int: StoredSymbols]
        public var hasLines: Bool
    }

    /// Decodes `table` (the whole table, header included) against the trace's modules.
    public static func decode(_ table: [UInt8], modules: [TraceModule]) throws -> Decoded {
        try table.withUnsafeBytes { bytes in
            var cursor = ByteCursor(bytes)
            do {
                return try decode(&cursor, modules: modules)
            } catch let error as ByteCursorError {
                throw Failure.damaged("\(error)")
            }
        }
    }

    /// Whether `table` is a whole table: its magic, version, body size and checksum. The reader
    /// trusts the header's `symbols_offset` (the blocks end there) and `symbolize` replaces a
    /// table only when it is one: a damaged offset must never cut the blocks short.
    public static func check(_ table: [UInt8]) throws {
        try table.withUnsafeBytes { bytes in
            var cursor = ByteCursor(bytes)
            do {
                _ = try checkEnvelope(&cursor)
            } catch let error as ByteCursorError {
                throw Failure.damaged("\(error)")
            }
        }
    }

    /// Reads and checks the table's header and checksum; returns its flags, the cursor at the body.
    private static func checkEnvelope(_ cursor: inout ByteCursor) throws -> UInt32 {
        typealias Format = TraceFormat.SymbolTable
        guard cursor.remaining >= Format.headerSize else {
            throw Failure.damaged("\(cursor.remaining) bytes, shorter than its header")
        }
        for byte in Format.magic {
            guard try cursor.readU8() == byte else { throw Failure.damaged("no table magic") }
        }
        let version = try cursor.readU32()
        guard version == Format.version else { throw Failure.damaged("version \(version), expected \(Format.version)") }
        let flags = try cursor.readU32()
        let bodySize = try cursor.readU64()
        let sum = try cursor.readU64()
        guard bodySize == UInt64(cursor.remaining) else {
            throw Failure.damaged("its body is \(cursor.remaining) bytes, its header says \(bodySize)")
        }
        let body = UnsafeRawBufferPointer(rebasing: cursor.bytes[cursor.offset..<cursor.end])
        guard checksum(body) == sum else { throw Failure.damaged("checksum mismatch") }
        return flags
    }

    private static func decode(_ cursor: inout ByteCursor, modules: [TraceModule]) throws -> Decoded {
        typealias Format = TraceFormat.SymbolTable
        let flags = try checkEnvelope(&cursor)
        let hasLines = flags & Format.linesFlag != 0

        // Every count is checked against the bytes left (each item takes at least one byte), so a
        // crafted count cannot make an allocation larger than the table.
        func count() throws -> Int {
            let value = try cursor.readVarint()
            guard value <= UInt64(cursor.remaining) else {
                throw Failure.damaged("a count of \(value) at byte \(cursor.offset), more than the bytes left")
            }
            return Int(value)
        }
        let fileCount = try count()
        var files: [String] = []
        files.reserveCapacity(fileCount)
        for _ in 0..<fileCount { files.append(try cursor.readString()) }
        let moduleCount = try count()
        var result: [Int: StoredSymbols] = [:]
        for _ in 0..<moduleCount {
            let rawIndex = try cursor.readVarint()
            let base = try cursor.readVarint(), lo = try cursor.readVarint(), hi = try cursor.readVarint()
            let buildID = try cursor.readBytes()
            let path = try cursor.readBytes()
            guard rawIndex < UInt64(modules.count), result[Int(rawIndex)] == nil else {
                throw Failure.damaged("module \(rawIndex) is not one of the trace's \(modules.count) modules, or listed twice")
            }
            let index = Int(rawIndex)
            let module = modules[index]
            guard module.base == base, module.lo == lo, module.hi == hi, module.buildID == buildID,
                  module.pathBytes == path else {
                throw Failure.damaged("module \(index) is not the trace's \(module.path)")
            }
            let entryCount = try count()
            var entries: [(address: UInt64, symbol: StoredSymbol)] = []
            entries.reserveCapacity(entryCount)
            var address: UInt64 = 0
            for position in 0..<entryCount {
                let delta = try cursor.readVarint()
                guard position == 0 || delta > 0 else { throw Failure.damaged("addresses of \(module.name) not ascending") }
                let (next, overflow) = address.addingReportingOverflow(delta)
                guard !overflow else { throw Failure.damaged("an address of \(module.name) overflows") }
                address = next
                let name = try cursor.readString()
                let file = try cursor.readVarint()
                guard file <= UInt64(files.count) else { throw Failure.damaged("file \(file) of \(files.count)") }
                let line = try cursor.readVarint()
                guard line <= UInt64(Int32.max) else { throw Failure.damaged("line \(line) out of range") }
                entries.append((address, StoredSymbol(name: name, file: file == 0 ? nil : files[Int(file) - 1],
                                                      line: line == 0 ? nil : Int(line))))
            }
            result[index] = StoredSymbols(hasLines: hasLines, entries: entries)
        }
        guard cursor.isAtEnd else { throw Failure.damaged("\(cursor.remaining) bytes after its last module") }
        return Decoded(modules: result, hasLines: hasLines)
    }

    /// FNV-1a, 64 bits: catches a garbled table (a cut is caught by the sizes).
    static func checksum<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        FNV1a.hash(bytes)
    }

    private struct Encoder {
        var bytes: [UInt8] = []

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func data(_ data: [UInt8]) {
            varint(UInt64(data.count))
            bytes.append(contentsOf: data)
        }

        mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    }
}
