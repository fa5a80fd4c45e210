/// Why a read from a `ByteCursor` failed. Bad input is an error value, never a trap.
public enum ByteCursorError: Error, Equatable, Sendable {
    /// The read needed `needed` bytes at `offset`, but the cursor ends at `end`.
    case outOfRange(offset: Int, needed: Int, end: Int)
    /// A varint ran longer than 10 bytes or does not fit in 64 bits.
    case overlongVarint(offset: Int)
}

/// The one bounds-checked reader every trace parser uses.
///
/// It reads little-endian integers, LEB128 varints and length-prefixed byte strings from a
/// borrowed buffer (a `[UInt8]`, or the block the reader just read). Every read checks its range
/// first and throws `ByteCursorError`; nothing here can trap on malformed data. The buffer must
/// outlive the cursor: use it inside `withUnsafeBytes` or while the block's buffer is alive.
public struct ByteCursor {
    public let bytes: UnsafeRawBufferPointer
    /// The next byte to read, relative to the start of `bytes`.
    public private(set) var offset: Int
    /// One past the last readable byte.
    public let end: Int

    /// A cursor over `bytes[start..<end]` (the whole buffer by default). Out-of-range bounds are
    /// clamped to the buffer.
    public init(_ bytes: UnsafeRawBufferPointer, start: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        let limit = min(max(end ?? bytes.count, 0), bytes.count)
        self.end = limit
        self.offset = min(max(start, 0), limit)
    }

    public var remaining: Int { end - offset }
    public var isAtEnd: Bool { offset >= end }

    /// Checks that `count` bytes are readable and returns the offset they start at.
    private mutating func claim(_ count: Int) throws -> Int {
        guard count >= 0, count <= end - offset else {
            throw ByteCursorError.outOfRange(offset: offset, needed: count, end: end)
        }
        defer { offset += count }
        return offset
    }

    public mutating func skip(_ count: Int) throws { _ = try claim(count) }

    public mutating func readU8() throws -> UInt8 {
        bytes[try claim(1)]
    }

    public mutating func readU16() throws -> UInt16 { UInt16(try readLittleEndian(2)) }
    public mutating func readU32() throws -> UInt32 { UInt32(try readLittleEndian(4)) }
    public mutating func readU64() throws -> UInt64 { try readLittleEndian(8) }

    private mutating func readLittleEndian(_ size: Int) throws -> UInt64 {
        let start = try claim(size)
        var value: UInt64 = 0
        for index in (0..<size).reversed() {
            value = value << 8 | UInt64(bytes[start + index])
        }
        return value
    }

    /// An unsigned LEB128 varint: 7 bits a byte, low bits first, at most 10 bytes.
    public mutating func readVarint() throws -> UInt64 {
        let start = offset
        // When even a 10-byte varint fits, one range check covers every byte: the fast path for
        // millions of records. Otherwise each byte is claimed in turn.
        let unchecked = end - offset >= 10
        var index = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte: UInt8
            if unchecked {
                byte = bytes[index]
                index += 1
            } else {
                byte = try readU8()
            }
            let payload = UInt64(byte & 0x7f)
            // The 10th byte may only carry the top bit of a 64-bit value.
            if shift == 63 && payload > 1 { throw ByteCursorError.overlongVarint(offset: start) }
            value |= payload << shift
            if byte & 0x80 == 0 {
                if unchecked { offset = index }
                return value
            }
            shift += 7
            if shift > 63 { throw ByteCursorError.overlongVarint(offset: start) }
        }
    }

    /// A zigzag-encoded signed varint: `(x << 1) ^ (x >> 63)`.
    public mutating func readZigzag() throws -> Int64 {
        ByteCursor.unzigzag(try readVarint())
    }

    public static func unzigzag(_ raw: UInt64) -> Int64 {
        Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// A varint length followed by that many bytes.
    public mutating func readBytes() throws -> [UInt8] {
        let lengthOffset = offset
        let length = try readVarint()
        guard length <= UInt64(remaining) else {
            throw ByteCursorError.outOfRange(offset: lengthOffset, needed: Int(clamping: length), end: end)
        }
        let start = try claim(Int(length))
        return Array(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + Int(length))]))
    }

    /// A varint length followed by that many bytes of UTF-8. Invalid sequences become U+FFFD:
    /// a path with odd bytes should still name its module rather than lose the record.
    public mutating func readString() throws -> String {
        String(decoding: try readBytes(), as: UTF8.self)
    }
}

extension ByteCursorError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .outOfRange(offset, needed, end):
            return "read of \(needed) bytes at offset \(offset) runs past the end (\(end))"
        case let .overlongVarint(offset):
            return "varint at offset \(offset) is longer than 10 bytes or overflows 64 bits"
        }
    }
}
