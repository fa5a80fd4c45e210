/// Where one block is in the file, from its 32-byte header (docs/trace-format.md, "Blocks").
struct TraceBlock {
    static let magic = TraceFormat.blockMagic
    static let headerSize = TraceFormat.blockHeaderSize

    /// File offset of the block header.
    var offset: Int
    var stream: UInt32
    var tid: UInt64
    var seq: UInt64
    var sealed: Bool
    /// Payload bytes the header says were committed.
    var used: Int
    /// File offset one past the last payload byte present: less than `offset + 32 + used`
    /// when the file was cut inside this block.
    var payloadEnd: Int

    var payloadStart: Int { offset + TraceBlock.headerSize }
    var isTruncated: Bool { payloadEnd < payloadStart + used }
}

/// Finds the blocks of a trace file between its header and `end`: skips never-used (all-zero)
/// blocks and holes, and stops, with a warning, at the first damaged block header.
struct BlockScanner {
    let source: TraceSource
    let blockSize: Int
    /// Where the blocks end: the file's size, or the header's `next_block` when that is less.
    let end: Int
    /// A flight recorder's trace (CALLTRACE_LIMIT): a block whose `used` is 0 holds no records
    /// whatever its header says, since the runtime clears `used` first when it reuses a block.
    var skipsEmpty = false

    /// File offset of the block the data ends inside, nil when it ends on a block boundary. The
    /// runtime grows and shrinks the file by whole blocks, so a partial block means a cut file,
    /// even when the cut falls in a block's unused, all-zero tail.
    var cutBlockOffset: Int? {
        guard end > TraceHeader.size else { return nil }
        let tail = (end - TraceHeader.size) % blockSize
        return tail == 0 ? nil : end - tail
    }

    /// The blocks in file order. `cutAt` is set when the file turned out shorter than `end`
    /// while it was being read.
    func scan(warnings: inout [String], cutAt: inout Int?) -> [TraceBlock] {
        var blocks: [TraceBlock] = []
        var header = [UInt8](repeating: 0, count: TraceBlock.headerSize)
        var offset = TraceHeader.size
        while offset < end {
            let wanted = min(TraceBlock.headerSize, end - offset)
            let got = header.withUnsafeMutableBytes { source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<wanted]), at: offset) }
            if got < wanted {
                cutAt = offset + got
                break
            }
            // A block header cut short: `cutBlockOffset` reports the cut.
            guard got >= TraceBlock.headerSize else { break }
            if header.allSatisfy({ $0 == 0 }) {
                offset = nextCandidate(after: offset)
                continue
            }
            let available = min(blockSize, end - offset)
            do {
                let block = try header.withUnsafeBytes { bytes in
                    try readHeader(bytes, offset: offset, available: available, warnings: &warnings)
                }
                guard let block else { break }
                if !(skipsEmpty && block.used == 0) { blocks.append(block) }
            } catch {
                warnings.append("damaged block header at byte \(offset): \(error); stopped reading there")
                break
            }
            offset += blockSize
        }
        return blocks
    }

    /// The next block that may hold data after the unused one at `offset`: the next block, or,
    /// past a hole, the block the data after the hole is in.
    private func nextCandidate(after offset: Int) -> Int {
        let next = offset + blockSize
        guard next < end, let data = source.dataOffset(from: next) else { return end }
        guard data > next else { return next }
        return TraceHeader.size + (data - TraceHeader.size) / blockSize * blockSize
    }

    /// nil (with a warning) when the header is damaged: reading ends at that block.
    private func readHeader(_ bytes: UnsafeRawBufferPointer, offset: Int, available: Int,
                            warnings: inout [String]) throws -> TraceBlock? {
        typealias At = TraceFormat.BlockOffset
        func field(_ at: Int) -> ByteCursor { ByteCursor(bytes, start: at) }
        guard bytes.starts(with: TraceBlock.magic) else {
            warnings.append("block at byte \(offset) has no block magic; stopped reading there")
            return nil
        }
        var usedField = field(At.used), streamField = field(At.stream), flagsField = field(At.flags)
        var tidField = field(At.tid), seqField = field(At.seq)
        let used = Int(try usedField.readU32())
        let stream = try streamField.readU32()
        let flags = try flagsField.readU32()
        let tid = try tidField.readU64()
        let seq = try seqField.readU64()
        guard used <= blockSize - TraceBlock.headerSize else {
            warnings.append("block at byte \(offset) claims \(used) bytes, more than it holds; stopped reading there")
            return nil
        }
        let payloadEnd = offset + min(available, TraceBlock.headerSize + used)
        return TraceBlock(offset: offset, stream: stream, tid: tid, seq: seq,
                          sealed: flags & TraceFormat.BlockFlag.sealed != 0, used: used, payloadEnd: payloadEnd)
    }
}
