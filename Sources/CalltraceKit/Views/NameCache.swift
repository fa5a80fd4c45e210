/// Function names as UTF-8 bytes, looked up once per function address rather than once per line,
/// and kept in one arena so that writing a name costs no reference counting. When modules ever
/// shared an address range (a library unloaded and another loaded in its place) the name depends
/// on when the call ended, so every call then asks the symbolicator.
final class NameCache {
    private let symbolicator: Symbolicator
    private var index: [UInt64: Int] = [:]          // function address -> entry
    private var spans: [(start: Int, count: Int)] = []
    private var arena: UnsafeMutablePointer<UInt8>
    private var arenaCapacity = 1 << 16
    private var arenaCount = 0
    private var lastAddress: UInt64 = 0              // one-entry cache in front of the dictionary
    private var lastEntry = -1

    init(symbolicator: Symbolicator) {
        self.symbolicator = symbolicator
        arena = .allocate(capacity: arenaCapacity)
    }

    deinit { arena.deallocate() }

    /// The name of the function `record` called, valid until the next call.
    func name(of record: CallRecord) -> UnsafeBufferPointer<UInt8> {
        let entry: Int
        if !symbolicator.addressesAreUnambiguous {
            lastEntry = -1
            entry = add(record)            // each time: the name depends on the record's time
        } else if record.function == lastAddress && lastEntry >= 0 {
            entry = lastEntry
        } else {
            entry = index[record.function] ?? add(record)
            lastAddress = record.function
            lastEntry = entry
        }
        let span = spans[entry]
        return UnsafeBufferPointer(start: arena + span.start, count: span.count)
    }

    /// Writes the name of the function `record` called.
    func write(nameOf record: CallRecord, to output: ByteOutput) {
        output.write(name(of: record))
    }

    private func add(_ record: CallRecord) -> Int {
        if !symbolicator.addressesAreUnambiguous && !spans.isEmpty { // reuse one scratch entry
            spans.removeAll(keepingCapacity: true)
            arenaCount = 0
        }
        var name = symbolicator.symbolicate(record.function, atTick: record.endTick).name
        name.withUTF8 { bytes in
            if arenaCount + bytes.count > arenaCapacity {
                let capacity = max(arenaCapacity * 2, arenaCount + bytes.count)
                let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
                grown.update(from: arena, count: arenaCount)
                arena.deallocate()
                arena = grown
                arenaCapacity = capacity
            }
            if let base = bytes.baseAddress { (arena + arenaCount).update(from: base, count: bytes.count) }
            spans.append((arenaCount, bytes.count))
            arenaCount += bytes.count
        }
        if symbolicator.addressesAreUnambiguous { index[record.function] = spans.count - 1 }
        return spans.count - 1
    }
}
