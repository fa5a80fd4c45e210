/// A traced thread: one record stream. From THREAD records (the last one wins) or, failing
/// that, from the tid in the stream's block headers.
public struct ThreadInfo: Equatable, Sendable {
    public var stream: UInt32
    public var tid: UInt64
    /// Empty when the runtime never learnt it.
    public var name: String

    public init(stream: UInt32, tid: UInt64, name: String = "") {
        self.stream = stream
        self.tid = tid
        self.name = name
    }

    /// Decodes a THREAD record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let (stream, tid, name) = try body.read(UInt64.self, UInt64.self, String.self)
        guard let stream32 = UInt32(exactly: stream) else { throw RecordError.badStream(stream) }
        self.init(stream: stream32, tid: tid, name: name)
    }
}
