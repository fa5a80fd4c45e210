/// Output for views that write millions of lines: bytes go into one fixed buffer, handed to `sink`
/// in pieces of up to 64 KiB. Numbers are formatted straight into it, so no `String` is made per
/// line (that was most of the time of `report` on big traces).
public final class ByteOutput {
    private static let capacity = 1 << 16
    private let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: ByteOutput.capacity)
    private var count = 0
    private let sink: (UnsafeRawBufferPointer) -> Void

    public init(sink: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.sink = sink
    }

    deinit {
        flush()
        storage.deallocate()
    }

    /// What `body` writes, as a string (a view's whole output in tests; fields made once per function).
    public static func text(_ body: (ByteOutput) -> Void) -> String {
        var bytes: [UInt8] = []
        let output = ByteOutput { bytes.append(contentsOf: $0) }
        body(output)
        output.flush()
        return String(decoding: bytes, as: UTF8.self)
    }

    public func flush() {
        guard count > 0 else { return }
        sink(UnsafeRawBufferPointer(start: storage, count: count))
        count = 0
    }

    /// Room for `bytes` more; true when they fit in the buffer.
    @inline(__always) private func makeRoom(_ bytes: Int) -> Bool {
        if count + bytes > ByteOutput.capacity { flush() }
        return bytes <= ByteOutput.capacity
    }

    /// Room for up to `bytes` bytes written straight into the buffer, then `commit` says how many
    /// were. Nil when `bytes` is more than the buffer holds.
    @inline(__always) public func reserve(_ bytes: Int) -> UnsafeMutablePointer<UInt8>? {
        guard makeRoom(bytes) else { return nil }
        return storage + count
    }

    @inline(__always) public func commit(_ bytes: Int) { count += bytes }

    public func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        guard makeRoom(bytes.count) else { // larger than the buffer: straight through
            sink(UnsafeRawBufferPointer(bytes))
            return
        }
        (storage + count).update(from: base, count: bytes.count)
        count += bytes.count
    }

    public func write(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { write($0) } }

    /// `bytes` handed to the sink as they are, after what the buffer holds: output made elsewhere
    /// in big pieces (`ReportJSONLStream`'s spooled lines) is not copied again.
    public func pass(_ bytes: UnsafeRawBufferPointer) {
        flush()
        if !bytes.isEmpty { sink(bytes) }
    }

    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write($0) }
    }

    @inline(__always) public func write(byte: UInt8) {
        _ = makeRoom(1)
        storage[count] = byte
        count += 1
    }

    public func write(spaces: Int) {
        var left = spaces
        while left > 0 {
            let chunk = min(left, 4096)
            _ = makeRoom(chunk)
            (storage + count).initialize(repeating: 0x20, count: chunk)
            count += chunk
            left -= chunk
        }
    }

    /// `value` in decimal, right-aligned in `width` columns.
    public func write(_ value: UInt64, width: Int) {
        write(fixed: value, decimals: 0, width: width)
    }

    /// `value / 10^decimals` with exactly `decimals` places, right-aligned in `width` columns.
    public func write(fixed value: UInt64, decimals: Int, width: Int) {
        guard let out = reserve(max(width, 22)) else { return }
        commit(ByteOutput.format(fixed: value, decimals: decimals, width: width, at: out))
    }

    /// `write(fixed:decimals:width:)` without the first digit (`1_000_000 + n` writes n on six
    /// digits with its leading zeros).
    public func write(fixed value: UInt64, decimals: Int, width: Int, droppingFirst: Bool) {
        guard droppingFirst, let out = reserve(max(width, 22)) else { return write(fixed: value, decimals: decimals, width: width) }
        let length = ByteOutput.format(fixed: value, decimals: decimals, width: width, at: out)
        for i in 1..<max(length, 1) { out[i - 1] = out[i] }
        commit(max(length - 1, 0))
    }

    /// Writes `value / 10^decimals` with exactly `decimals` places (at most 20), right-aligned in
    /// `width` columns, at `out`, which has room for `max(width, 22)` bytes; returns the length.
    @inline(__always)
    public static func format(fixed value: UInt64, decimals: Int, width: Int, at out: UnsafeMutablePointer<UInt8>) -> Int {
        var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0) // 32 bytes: 20 digits and a point
        return withUnsafeMutableBytes(of: &scratch) { digits in
            var v = value
            var start = digits.count
            var written = 0
            repeat {
                if written == decimals && decimals > 0 {
                    start -= 1
                    digits[start] = UInt8(ascii: ".")
                }
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
                v /= 10
                written += 1
            } while v > 0 || written <= decimals
            let length = digits.count - start
            let pad = max(width - length, 0)
            out.initialize(repeating: 0x20, count: pad)
            for i in 0..<length { out[pad + i] = digits[start + i] }
            return pad + length
        }
    }
}
