/// Protocol Buffers' wire format read back field by field, without Python: for checks run on
/// thousands of renderings (the robustness tests), where a venv per trace would be too slow.
enum ProtobufWire {
    struct Field {
        var number: Int
        /// A varint field's value (0 for the others).
        var value: UInt64
        /// A length-delimited field's bytes.
        var bytes: ArraySlice<UInt8>?
    }

    /// The fields of one message, or nil when the bytes are not well-formed.
    static func fields(_ bytes: ArraySlice<UInt8>) -> [Field]? {
        var fields: [Field] = []
        var at = bytes.startIndex
        func varint() -> UInt64? {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 7) {
                guard at < bytes.endIndex else { return nil }
                let byte = bytes[at]
                at += 1
                value |= UInt64(byte & 0x7F) << UInt64(shift)
                if byte < 0x80 { return value }
            }
            return nil
        }
        while at < bytes.endIndex {
            guard let key = varint(), key >> 3 > 0, key >> 3 < 1 << 29 else { return nil }
            let number = Int(key >> 3)
            switch key & 7 {
            case 0:
                guard let value = varint() else { return nil }
                fields.append(Field(number: number, value: value))
            case 1, 5:
                let size = key & 7 == 1 ? 8 : 4
                guard bytes.endIndex - at >= size else { return nil }
                at += size
                fields.append(Field(number: number, value: 0))
            case 2:
                guard let length = varint(), length <= UInt64(bytes.endIndex - at) else { return nil }
                fields.append(Field(number: number, value: 0, bytes: bytes[at..<(at + Int(length))]))
                at += Int(length)
            default:
                return nil
            }
        }
        return fields
    }

    /// A Perfetto trace's TrackEvent slices: begins, ends, and the begins named by an interned id
    /// (calls; frames and hangs carry their names). Nil when any packet or event is malformed.
    static func perfettoSlices(_ bytes: [UInt8]) -> (begins: Int, ends: Int, calls: Int)? {
        guard let packets = fields(bytes[...]) else { return nil }
        var counts = (begins: 0, ends: 0, calls: 0)
        for packet in packets {
            guard packet.number == 1, let body = packet.bytes, let packetFields = fields(body) else { return nil }
            for field in packetFields where field.number == 11 {
                guard let event = field.bytes.flatMap(fields) else { return nil }
                switch event.last(where: { $0.number == 9 })?.value {
                case 1:
                    counts.begins += 1
                    if event.contains(where: { $0.number == 10 }) { counts.calls += 1 }
                case 2: counts.ends += 1
                default: break
                }
            }
        }
        return counts
    }
}
