/// Function names as UTF-8 bytes in one buffer, so that writing a name costs no reference
/// counting (an array of arrays retains on every access; the tree view writes millions of names).
final class NameArena {
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    private let spans: [(start: Int, count: Int)]

    init(_ names: [String]) {
        var spans: [(start: Int, count: Int)] = []
        var total = 0
        for name in names {
            spans.append((total, name.utf8.count))
            total += name.utf8.count
        }
        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(total, 1))
        for (name, span) in zip(names, spans) {
            _ = UnsafeMutableBufferPointer(rebasing: bytes[span.start..<(span.start + span.count)]).initialize(from: name.utf8)
        }
        self.bytes = bytes
        self.spans = spans
    }

    deinit { bytes.deallocate() }

    subscript(index: Int) -> UnsafeBufferPointer<UInt8> {
        let span = spans[index]
        return UnsafeBufferPointer(start: bytes.baseAddress.map { $0 + span.start }, count: span.count)
    }
}
