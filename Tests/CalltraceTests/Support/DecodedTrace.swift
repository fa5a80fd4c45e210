@testable import CalltraceKit
import Foundation

/// A trace with the calls the reader decoded, below the profile: what the reader tests check
/// (records, ticks, depths as the file holds them). The calls come from the reader's sink, as the
/// profile's do, each stream's in the order written (`TracePiece.inWrittenOrder`); the trace's
/// other fields read through (`decoded.header`, `decoded.warnings`).
@dynamicMemberLookup
struct DecodedTrace {
    let trace: Trace
    /// Every kept call, stream by stream in `trace.threads` order.
    let records: [CallRecord]
    private let ranges: [UInt32: Range<Int>]

    subscript<T>(dynamicMember keyPath: KeyPath<Trace, T>) -> T { trace[keyPath: keyPath] }

    /// The calls of `stream` in the order they ended.
    func records(ofStream stream: UInt32) -> ArraySlice<CallRecord> {
        guard let range = ranges[stream] else { return [] }
        return records[range]
    }

    static func read(bytes: [UInt8], options: TraceReader.Options = TraceReader.Options()) throws -> DecodedTrace {
        let collector = Collector()
        let trace = try bytes.withUnsafeBytes { try TraceReader.read($0, options: options, sink: collector) }
        return DecodedTrace(trace, decoded: collector.calls)
    }

    static func read(path: String, options: TraceReader.Options = TraceReader.Options()) throws -> DecodedTrace {
        let collector = Collector()
        let trace = try TraceReader.read(path: FilePath(path), options: options, sink: collector)
        return DecodedTrace(trace, decoded: collector.calls)
    }

    static func read(_ source: TraceSource, options: TraceReader.Options = TraceReader.Options()) throws -> DecodedTrace {
        let collector = Collector()
        let trace = try TraceReader.read(source, options: options, sink: collector) { _ in false }
        return DecodedTrace(trace, decoded: collector.calls)
    }

    private init(_ trace: Trace, decoded: [CallRecord]) {
        self.trace = trace
        var records: [CallRecord] = []
        var ranges: [UInt32: Range<Int>] = [:]
        let pieces = Dictionary(grouping: trace.pieces, by: \.stream)
        for thread in trace.threads {
            let start = records.count
            for piece in TracePiece.inWrittenOrder(pieces[thread.stream] ?? []) {
                records += decoded[piece.records]
            }
            ranges[thread.stream] = start..<records.count
        }
        self.records = records
        self.ranges = ranges
    }

    private final class Collector: CallRecordSink {
        var calls: [CallRecord] = []
        func begin(header: TraceHeader, modules: [TraceModule], runDelays: [RunDelay], threadStates: [ThreadStateSample]) {}
        func add(_ call: CallRecord) { calls.append(call) }
    }
}
