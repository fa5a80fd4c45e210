/// JSON pieces written straight into a `ByteOutput` (RFC 8259), for views that write millions of
/// values.
extension ByteOutput {
    /// A JSON string literal: quotes, backslashes and control characters escaped.
    public func writeJSONString(_ text: String) {
        write(byte: UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var plainStart = 0
            for (i, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                if i > plainStart { write(UnsafeBufferPointer(rebasing: bytes[plainStart..<i])) }
                plainStart = i + 1
                switch byte {
                case UInt8(ascii: "\""): write("\\\"")
                case UInt8(ascii: "\\"): write("\\\\")
                case 0x0A: write("\\n")
                case 0x0D: write("\\r")
                case 0x09: write("\\t")
                default:
                    let hex = String(byte, radix: 16)
                    write("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                }
            }
            if bytes.count > plainStart { write(UnsafeBufferPointer(rebasing: bytes[plainStart...])) }
        }
        write(byte: UInt8(ascii: "\""))
    }

    /// A literal's bytes, with no `String` made (a view's punctuation and keys).
    @inline(__always)
    public func write(static text: StaticString) {
        write(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `"key":`
    public func writeJSONKey(_ key: StaticString) {
        write(byte: UInt8(ascii: "\""))
        write(UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        write(byte: UInt8(ascii: "\""))
        write(byte: UInt8(ascii: ":"))
    }

    /// Milliseconds with `decimals` places (6: exact to the nanosecond); negatives as 0.
    public func writeMilliseconds(_ time: Nanoseconds, decimals: Int = 6) {
        let ns = UInt64(max(time.value, 0))
        let scaled = decimals >= 6 ? ns : (ns + ByteOutput.half(6 - decimals)) / ByteOutput.power10(6 - decimals)
        write(fixed: scaled, decimals: decimals, width: 0)
    }

    /// Seconds with microseconds (unix times in JSON lines).
    public func writeSeconds(_ time: Nanoseconds) {
        write(fixed: (UInt64(max(time.value, 0)) + 500) / 1000, decimals: 6, width: 0)
    }

    /// `{`, the members `members` writes (`"key":value`, a comma before each but the first), `}`:
    /// a document whose shape is fixed writes its brackets here, once, rather than by hand. (A
    /// view that streams a tree of unknown depth opens and closes through `JSONNesting`.)
    @inline(__always)
    func writeJSONObject(_ members: () -> Void) {
        write(byte: UInt8(ascii: "{"))
        members()
        write(byte: UInt8(ascii: "}"))
    }

    /// `[`, each element as `element` writes it, with commas between, `]`.
    @inline(__always)
    func writeJSONArray<Elements: Sequence>(_ elements: Elements, _ element: (Elements.Element) -> Void) {
        write(byte: UInt8(ascii: "["))
        var first = true
        for item in elements {
            if !first { write(byte: UInt8(ascii: ",")) }
            first = false
            element(item)
        }
        write(byte: UInt8(ascii: "]"))
    }

    /// `"function":NAME,"start_ms":S,"cost_ms":C`: a call's members as `timeline` and `hitches`
    /// list it; the caller adds its other members.
    func writeJSONCallMembers(_ name: String, start: Instant, cost: Nanoseconds) {
        write(static: "\"function\":")
        writeJSONString(name)
        write(static: ",\"start_ms\":")
        writeMilliseconds(start.sinceStart)
        write(static: ",\"cost_ms\":")
        writeMilliseconds(cost)
    }

    public func writeInteger<Value: BinaryInteger>(_ value: Value) {
        if value < 0 { write(byte: UInt8(ascii: "-")) }
        write(UInt64(value.magnitude), width: 0)
    }

    static func power10(_ exponent: Int) -> UInt64 {
        var result: UInt64 = 1
        for _ in 0..<exponent { result *= 10 }
        return result
    }

    static func half(_ exponent: Int) -> UInt64 { exponent == 0 ? 0 : power10(exponent) / 2 }
}

extension ByteOutput {
    /// A call's `TimeSplit` as JSON members (milliseconds, like its cost), each key with "_ms"
    /// appended when `milliseconds` (the JSON documents; not in JSON lines): `cpu`, `preempted`
    /// (unless `preemptedWritten`: a report's call has it already when not zero), `blocked`,
    /// `unknown` when not zero, and `blocked_on` (what and how long, largest first) when blocked.
    func writeTimeSplitMembers(_ split: TimeSplit, milliseconds: Bool, preemptedWritten: Bool) {
        writeSplitKey("cpu", milliseconds)
        writeMilliseconds(split.cpu)
        if !preemptedWritten {
            writeSplitKey("preempted", milliseconds)
            writeMilliseconds(split.preempted)
        }
        writeSplitKey("blocked", milliseconds)
        writeMilliseconds(split.blocked)
        if split.unknown > .zero {
            writeSplitKey("unknown", milliseconds)
            writeMilliseconds(split.unknown)
        }
        guard !split.blockedOn.isEmpty else { return }
        write(static: ",\"blocked_on\":[")
        for (i, entry) in split.blockedOn.enumerated() {
            write(static: i == 0 ? "{\"what\":" : ",{\"what\":")
            writeJSONString(entry.what)
            write(static: milliseconds ? ",\"time_ms\":" : ",\"time\":")
            writeMilliseconds(entry.time)
            write(static: "}")
        }
        write(static: "]")
    }

    private func writeSplitKey(_ key: String, _ milliseconds: Bool) {
        write(",\"\(key)\(milliseconds ? "_ms" : "")\":")
    }
}
