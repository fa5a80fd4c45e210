/// The streams of the decoded pieces: the threads in the order they are shown
/// (`TraceReader.streamOrder`), and a warning for each stream whose blocks are not all there
/// once each. The calls themselves went to the reader's sink, which puts each stream's in the
/// order written (`TracePiece.inWrittenOrder`).
struct StreamAssembly {
    var threads: [ThreadInfo] = []
    var gapWarnings: [String] = []

    /// `overwritten`: a flight recorder reused blocks, so a stream may start at any `seq` and
    /// lack some: only a repeated `seq` is damage then.
    init(decoder: RecordDecoder, pid: UInt64, overwritten: Bool = false) {
        let byStream = Dictionary(grouping: decoder.pieces, by: \.stream).mapValues(TracePiece.inWrittenOrder)
        let tids = byStream.compactMapValues { $0.first?.tid }
        let order = TraceReader.streamOrder(Set(byStream.keys), tids: tids, named: decoder.threads, pid: pid)
        threads = order.map { decoder.threads[$0] ?? ThreadInfo(stream: $0, tid: tids[$0] ?? 0) }
        for stream in byStream.keys.sorted() {
            guard let pieces = byStream[stream] else { continue }
            let missing = !overwritten && pieces.enumerated().contains { UInt64($0.offset) != $0.element.seq }
            guard missing || pieces.count != Set(pieces.map(\.seq)).count else { continue }
            gapWarnings.append("stream \(stream) has missing or repeated blocks; some calls may be lost or misplaced")
        }
    }
}
