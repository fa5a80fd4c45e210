/// Where one block is in the file, from its 32-byte header (docs/trace-format.md, "Blocks").
struct TraceBlock {
    static let magic: [UInt8] = Array("CTBK".utf8)
    static let headerSize = 32

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

/// Finds the blocks of a trace file: skips never-used (all-zero) blocks and stops, with a
/// warning, at the first damaged block header or at the end of the file.
struct BlockScanner {
    let bytes: UnsafeRawBufferPointer
    let blockSize: Int

    /// File offset of the block the file ends inside, nil when it ends on a block boundary. The
    /// runtime grows and shrinks the file by whole blocks, so a partial block means a cut file,
    /// even when the cut falls in a block's unused, all-zero tail.
    var cutBlockOffset: Int? {
        guard bytes.count > TraceHeader.size else { return nil }
        let tail = (bytes.count - TraceHeader.size) % blockSize
        return tail == 0 ? nil : bytes.count - tail
    }

    func scan(warnings: inout [String]) -> [TraceBlock] {
        var blocks: [TraceBlock] = []
        var offset = TraceHeader.size
        while offset < bytes.count {
            let available = min(blockSize, bytes.count - offset)
            // A block header cut short: `cutBlockOffset` reports the cut.
            guard available >= TraceBlock.headerSize else { break }
            if isZero(offset..<(offset + TraceBlock.headerSize)) {
                offset += blockSize
                continue
            }
            do {
                var cursor = ByteCursor(bytes, start: offset, end: offset + available)
                guard let block = try readHeader(&cursor, offset: offset, available: available,
                                                 warnings: &warnings) else { break }
                blocks.append(block)
            } catch {
                warnings.append("damaged block header at byte \(offset): \(error); stopped reading there")
                break
            }
            offset += blockSize
        }
        return blocks
    }

    /// nil (with a warning) when the header is damaged: reading ends at that block.
    private func readHeader(_ cursor: inout ByteCursor, offset: Int, available: Int,
                            warnings: inout [String]) throws -> TraceBlock? {
        for expected in TraceBlock.magic {
            guard try cursor.readU8() == expected else {
                warnings.append("block at byte \(offset) has no block magic; stopped reading there")
                return nil
            }
        }
        let used = Int(try cursor.readU32())
        let stream = try cursor.readU32()
        let flags = try cursor.readU32()
        let tid = try cursor.readU64()
        let seq = try cursor.readU64()
        guard used <= blockSize - TraceBlock.headerSize else {
            warnings.append("block at byte \(offset) claims \(used) bytes, more than it holds; stopped reading there")
            return nil
        }
        let payloadEnd = offset + min(available, TraceBlock.headerSize + used)
        return TraceBlock(offset: offset, stream: stream, tid: tid, seq: seq, sealed: flags & 1 != 0,
                          used: used, payloadEnd: payloadEnd)
    }

    private func isZero(_ range: Range<Int>) -> Bool {
        range.allSatisfy { bytes[$0] == 0 }
    }
}
