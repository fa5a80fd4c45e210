import Glibc

/// Protocol Buffers' wire format (https://protobuf.dev/programming-guides/encoding/), written by
/// hand for exports of millions of messages: varints, length-delimited fields, and nested messages
/// built in one reusable buffer. A nested message gets one byte for its length up front (most are
/// under 128 bytes); a longer one moves its body up by the bytes its length needs. Nothing is
/// allocated per message once the buffer has grown to the largest message.
///
/// ```
/// writer.message(1) {                 // Trace.packet
///     writer.uint(8, timestamp)       // TracePacket.timestamp
///     writer.string(23, "name")       // ...
/// }
/// writer.drain(to: output)
/// ```
final class ProtobufWriter {
    enum WireType: UInt64 {
        case varint = 0
        case lengthDelimited = 2
    }

    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes written and not yet drained.
    private(set) var count = 0
    /// Where the one-byte length of each open nested message is (a stack; not an array, whose
    /// uniqueness checks on every push and pop were a tenth of the Perfetto export's time).
    private var open: UnsafeMutablePointer<Int>
    private var openCapacity = 16
    private var depth = 0

    init(capacity: Int = 1 << 16) {
        self.capacity = max(capacity, 64)
        storage = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
        open = UnsafeMutablePointer<Int>.allocate(capacity: openCapacity)
    }

    deinit {
        storage.deallocate()
        open.deallocate()
    }

    /// Hands the finished bytes to `output`. Only between top-level messages (an open message's
    /// length is not known yet): with a message open it writes nothing.
    func drain(to output: ByteOutput) {
        guard depth == 0 else { return }
        output.write(UnsafeBufferPointer(start: storage, count: count))
        count = 0
    }

    @inline(__always) private func reserve(_ bytes: Int) {
        if count + bytes > capacity { grow(to: count + bytes) }
    }

    private func grow(to needed: Int) {
        var newCapacity = capacity
        while newCapacity < needed { newCapacity *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        bigger.update(from: storage, count: count)
        storage.deallocate()
        storage = bigger
        capacity = newCapacity
    }

    @inline(__always) private func rawVarint(_ value: UInt64) {
        reserve(10)
        count += Self.put(varint: value, at: storage + count)
    }

    /// Writes `value` as a varint at `out` (room for 10 bytes); returns its length.
    @inline(__always) private static func put(varint value: UInt64, at out: UnsafeMutablePointer<UInt8>) -> Int {
        var value = value
        var length = 0
        while value >= 0x80 {
            out[length] = UInt8(truncatingIfNeeded: value) | 0x80
            length += 1
            value >>= 7
        }
        out[length] = UInt8(truncatingIfNeeded: value)
        return length + 1
    }

    @inline(__always) private func tag(_ field: Int, _ wire: WireType) {
        rawVarint(UInt64(field) << 3 | wire.rawValue)
    }

    /// A varint field (uint32, uint64, enums).
    @inline(__always) func uint(_ field: Int, _ value: UInt64) {
        tag(field, .varint)
        rawVarint(value)
    }

    /// An int32 or int64 field: negative values as ten bytes of two's complement, as protobuf has it.
    @inline(__always) func int(_ field: Int, _ value: Int64) {
        tag(field, .varint)
        rawVarint(UInt64(bitPattern: value))
    }

    @inline(__always) func bool(_ field: Int, _ value: Bool) {
        uint(field, value ? 1 : 0)
    }

    /// A bytes or string field.
    func bytes(_ field: Int, _ bytes: UnsafeBufferPointer<UInt8>) {
        tag(field, .lengthDelimited)
        rawVarint(UInt64(bytes.count))
        reserve(bytes.count)
        if let base = bytes.baseAddress, !bytes.isEmpty { (storage + count).update(from: base, count: bytes.count) }
        count += bytes.count
    }

    func string(_ field: Int, _ text: String) {
        var text = text
        text.withUTF8 { bytes(field, $0) }
    }

    /// Opens a nested message (or a packet of a stream of them); `endMessage` closes it.
    @inline(__always) func beginMessage(_ field: Int) {
        tag(field, .lengthDelimited)
        reserve(1)
        if depth == openCapacity {
            let bigger = UnsafeMutablePointer<Int>.allocate(capacity: openCapacity * 2)
            bigger.update(from: open, count: depth)
            open.deallocate()
            open = bigger
            openCapacity *= 2
        }
        open[depth] = count
        depth += 1
        count += 1
    }

    /// Closes the message opened last, writing its length (nothing when none is open).
    @inline(__always) func endMessage() {
        guard depth > 0 else { return }
        depth -= 1
        let at = open[depth]
        let length = count - at - 1
        if length < 0x80 {
            storage[at] = UInt8(truncatingIfNeeded: length)
            return
        }
        var extra = 0
        var rest = length >> 7
        while rest > 0 {
            extra += 1
            rest >>= 7
        }
        reserve(extra)
        memmove(storage + at + 1 + extra, storage + at + 1, length)
        _ = Self.put(varint: UInt64(length), at: storage + at)
        count += extra
    }

    @inline(__always) func message(_ field: Int, _ body: () -> Void) {
        beginMessage(field)
        body()
        endMessage()
    }
}
