/// A text stream that only counts what is written: renders a fuzzed trace completely without
/// keeping its output in memory.
public struct DiscardingOutput: TextOutputStream {
    public private(set) var byteCount = 0

    public init() {}

    public mutating func write(_ string: String) { byteCount += string.utf8.count }
}
