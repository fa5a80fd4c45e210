/// Puts the decoded pieces together: each stream's calls contiguous, its pieces in `seq` order,
/// the streams in the order they are shown (`TraceReader.streamOrder`).
///
/// The reader decodes blocks in that order already, so the calls are usually in place and are
/// not copied. Shared blocks (SEGMENT records) put pieces of other streams in between: then the
/// calls are copied once into their order.
struct StreamAssembly {
    var records: [CallRecord]
    var ranges: [UInt32: Range<Int>] = [:]
    var threads: [ThreadInfo] = []
    var gapWarnings: [String] = []

    init(decoder: RecordDecoder, pid: UInt64) {
        var byStream: [UInt32: [TracePiece]] = [:]
        for piece in decoder.pieces { byStream[piece.stream, default: []].append(piece) }
        for (stream, pieces) in byStream {
            byStream[stream] = pieces.sorted { ($0.seq, $0.blockOffset) < ($1.seq, $1.blockOffset) }
        }
        let tids = byStream.compactMapValues { $0.first?.tid }
        let order = TraceReader.streamOrder(Set(byStream.keys), tids: tids, named: decoder.threads, pid: pid)
        let inOrder = order.flatMap { byStream[$0] ?? [] }
        var position = 0
        // Calls that went to a sink are put in order there (ProfileAccumulator): only the
        // streams' order and the gaps are found here.
        let held = decoder.sink == nil
        let inPlace = !held || inOrder.allSatisfy { piece in
            defer { position = piece.records.upperBound }
            return piece.records.lowerBound == position
        } && position == decoder.kept
        if inPlace {
            records = decoder.records
        } else {
            records = []
            records.reserveCapacity(decoder.records.count)
        }
        for stream in order {
            let start = inPlace ? (byStream[stream]?.first?.records.lowerBound ?? position) : records.count
            var end = start
            for piece in byStream[stream] ?? [] {
                if !inPlace { records.append(contentsOf: decoder.records[piece.records]) }
                end += piece.records.count
            }
            if held { ranges[stream] = start..<end }  // calls a sink took have no place in `records`
            threads.append(decoder.threads[stream] ?? ThreadInfo(stream: stream, tid: tids[stream] ?? 0))
        }
        for stream in byStream.keys.sorted() {
            guard let pieces = byStream[stream] else { continue }
            let missing = pieces.enumerated().contains { UInt64($0.offset) != $0.element.seq }
            guard missing || pieces.count != Set(pieces.map(\.seq)).count else { continue }
            gapWarnings.append("stream \(stream) has missing or repeated blocks; some calls may be lost or misplaced")
        }
    }
}
