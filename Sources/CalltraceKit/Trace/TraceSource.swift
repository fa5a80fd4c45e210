/// Where the reader gets a trace's bytes: a file (`TraceFile`) or bytes in memory (tests, the
/// fuzzer). The reader copies what it needs, a block at a time, so a file that shrinks under
/// it only reads short: nothing the reader holds can turn into a SIGBUS, as a mapping would.
protocol TraceSource {
    /// The size when the reading began.
    var size: Int { get }
    /// Copies up to `buffer.count` bytes from `offset`; returns how many. Fewer at the end of the
    /// data: the end of the file, or where the file was cut while being read.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int
    /// The first offset at or after `offset` that may hold data (holes of a sparse file read as
    /// zeros and are skipped); nil when only a hole follows.
    func dataOffset(from offset: Int) -> Int?
    /// The first offset at or after `offset` that is in a hole; `Int.max` when none is known.
    func holeOffset(from offset: Int) -> Int
}

/// A trace held in memory.
struct MemoryTraceSource: TraceSource {
    let bytes: UnsafeRawBufferPointer

    var size: Int { bytes.count }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        guard offset >= 0, offset < bytes.count else { return 0 }
        let count = min(buffer.count, bytes.count - offset)
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
        return count
    }

    func dataOffset(from offset: Int) -> Int? { offset < bytes.count ? offset : nil }

    func holeOffset(from offset: Int) -> Int { Int.max }
}

/// The first `size` bytes of another source: the blocks of a trace whose stored symbol table
/// follows them, read as if the file ended where the table starts.
struct PrefixTraceSource: TraceSource {
    let base: TraceSource
    let size: Int

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        guard offset >= 0, offset < size else { return 0 }
        let count = min(buffer.count, size - offset)
        return base.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]), at: offset)
    }

    func dataOffset(from offset: Int) -> Int? {
        guard offset < size, let found = base.dataOffset(from: offset), found < size else { return nil }
        return found
    }

    func holeOffset(from offset: Int) -> Int {
        let found = base.holeOffset(from: offset)
        return found >= size ? Int.max : found
    }
}
