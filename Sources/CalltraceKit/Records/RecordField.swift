/// A value a record's body holds, as docs/trace-format.md writes it: a varint (`UInt64`, `Ticks`),
/// or a varint length and then that many bytes (`[UInt8]`; `String`, as UTF-8). Read in a row by
/// `ByteCursor.read`, so that a record's decoder states its layout in one line.
protocol RecordField {
    init(reading body: inout ByteCursor) throws
}

extension UInt64: RecordField {
    init(reading body: inout ByteCursor) throws { self = try body.readVarint() }
}

extension Ticks: RecordField {
    init(reading body: inout ByteCursor) throws { self.init(try body.readVarint()) }
}

extension String: RecordField {
    init(reading body: inout ByteCursor) throws { self = try body.readString() }
}

extension Array: RecordField where Element == UInt8 {
    init(reading body: inout ByteCursor) throws { self = try body.readBytes() }
}

extension ByteCursor {
    /// Fields in the order written, such as a RUN_DELAY record's
    /// `try body.read(UInt64.self, UInt64.self, Ticks.self, Ticks.self, UInt64.self)` (stream, tid,
    /// start, length, delay); throws at the first that cannot be read.
    mutating func read<each Field: RecordField>(_ fields: repeat (each Field).Type) throws -> (repeat each Field) {
        try (repeat (each Field).init(reading: &self))
    }
}
