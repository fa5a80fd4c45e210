/// The containers a JSON document holds open, so that its closing brackets are written from what
/// was opened rather than spelled out by hand (`"]}]}]}"`). One bit a level in one word (1 an
/// object, 0 an array), nothing allocated and nothing per value: the views keep writing their
/// members straight into the `ByteOutput` (their fast paths) and only open and close through it.
/// Deeper than 64 levels the kinds are not kept (no view nests nearly so deep).
struct JSONNesting {
    enum Kind { case object, array }

    private var objects: UInt64 = 0
    private(set) var depth = 0

    /// Writes `{` or `[` and remembers which.
    @inline(__always)
    mutating func open(_ kind: Kind, in output: ByteOutput) {
        output.write(byte: kind == .object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        if kind == .object { objects |= 1 << UInt64(depth) } else { objects &= ~(1 << UInt64(depth)) }
        depth += 1
    }

    /// Closes the innermost open container; nothing when none is open.
    @inline(__always)
    mutating func close(in output: ByteOutput) {
        guard depth > 0 else { return }
        depth -= 1
        output.write(byte: objects >> UInt64(depth) & 1 == 1 ? UInt8(ascii: "}") : UInt8(ascii: "]"))
    }

    /// Closes open containers until `level` are left.
    mutating func close(downTo level: Int, in output: ByteOutput) {
        while depth > max(level, 0) { close(in: output) }
    }
}
