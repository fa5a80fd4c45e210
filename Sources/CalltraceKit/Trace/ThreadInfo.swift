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
}
