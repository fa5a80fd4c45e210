/// `export --format otlp` made while the trace is read (`ProfileBuilder.stream`), so that its
/// memory does not grow with the number of calls: each call is put aside, as it comes, in a
/// 40-byte record in an unlinked temporary file (`SpoolFile`), and `write` then writes the spans
/// as `OTLPExport` does, byte for byte.
///
/// A span names its parent, and a call's parent is not known when the call ends: it is the pending
/// call that adopts it later (`PendingRuns`), and with depth gaps one call can adopt runs at
/// several depths. So each record keeps how the call changed the runs (how many it adopted, whether
/// it began a run), and `write` reads a thread's records backwards, undoing those changes: then a
/// call comes before its children, and the owner of each pending run is known when its calls are
/// read (a stack of owners, one per run: memory follows the stack's depth). That is why
/// `OTLPExport` writes a thread's calls in reverse exit order. Marks are placed by a forward
/// read of the records' times (`OTLPExport.MarkPlacement`), only on threads that have marks.
///
/// A trace whose calls came in an order that cannot give the view's tree makes `finish` say so
/// (`ViewStream`).
public final class OTLPExportStream: ViewStream {
    private let spool: SpoolFile
    private var measured = false
    private var threads: [UInt32: ThreadCalls] = [:]
    private var current: ThreadCalls?
    private var currentStream: UInt32?
    private var callCount = 0

    /// A call as `write` needs it: its times (nanoseconds since the profile's start), cost and
    /// function, and what it did to the pending runs.
    private struct Record {
        var start: Int64
        var end: Int64
        var cost: Int64
        var function: Int32
        /// How many runs it adopted (its children's).
        var adopted: UInt32
        var flags: UInt8
        /// Did it join the last run (else it began one)?
        var joined: Bool
    }

    /// One stream's calls: records in the spool (`chunks`, oldest first) and in `recent`.
    private final class ThreadCalls {
        /// Per run, the latest end among its calls (the process span covers the roots).
        var pending = PendingRuns<Int64>()
        var count = 0
        /// Grows with the thread's calls up to a chunk, not reserved up front: thousands of
        /// threads of a few calls (a thread per request) would each hold 40 KiB.
        var recent: [Record] = []
        var chunks: [Range<Int>] = []
        /// By call: the splits (`ProfileCall.split`), in memory (calls of a millisecond or more only).
        var splits: [Int: TimeSplit] = [:]
    }

    private static let recordsPerChunk = 1024

    /// Nil when no temporary file can be made: render `OTLPExport` from a profile instead.
    public init?() {
        guard let spool = SpoolFile() else { return nil }
        self.spool = spool
    }

    public func begin(unixTimeAtStart: Nanoseconds, measured: Bool, threshold: Nanoseconds) {
        self.measured = measured
    }

    public func add(_ function: ProfileFunction) {}

    public func piece(stream: UInt32, tid: UInt64) {}

    public func add(_ call: ProfileCall, stream: UInt32) {
        if stream != currentStream {
            if threads[stream] == nil { threads[stream] = ThreadCalls() }
            current = threads[stream]
            currentStream = stream
        }
        guard let thread = current else { return }
        let depth = call.depth
        let end = max(call.start &+ call.cost &+ (measured ? 0 : Int64(call.overhead)), call.start)
        let low = thread.pending.adopting(start: call.start, depth: depth)
        let adopted = thread.pending.runs.count - low
        let joined = thread.pending.place(from: low, start: call.start, depth: depth, cost: call.cost, newRun: end)
        if joined { thread.pending.updateLast { $0 = max($0, end) } }
        thread.recent.append(Record(start: call.start, end: end, cost: call.cost, function: call.function,
                                    adopted: UInt32(adopted), flags: call.flags.rawValue, joined: joined))
        if let split = call.split { thread.splits[thread.count] = split }
        thread.count += 1
        callCount += 1
        if thread.recent.count == Self.recordsPerChunk {
            thread.chunks.append(thread.recent.withUnsafeBytes { spool.append($0) })
            thread.recent.removeAll(keepingCapacity: true)
        }
    }

    /// Once the trace is read (`trace` says whose the calls were and in which order they were
    /// written; `profile` is what the stream gave back): true when the spans can be the view's,
    /// false when the caller must render the view from a whole profile.
    public func finish(trace: Trace, profile: Profile) -> Bool {
        guard spool.failure == 0, trace.cameInWrittenOrder, profile.threads.count == trace.threads.count else {
            return false
        }
        var shown = 0
        for info in trace.threads {
            guard let thread = threads[info.stream] else { continue }
            guard thread.pending.isExact else { return false }
            shown += 1
        }
        // Calls of a stream no thread shows (never so far) would be lost.
        return shown == threads.count
    }

    /// Writes the spans of `profile` (the stream's, after `finish` said true) as `OTLPExport`
    /// does; throws when the temporary file cannot be read back.
    public func write(trace: Trace, profile: Profile, options: ViewOptions, to output: ByteOutput) throws {
        try write(trace: trace, profile: profile, options: options, to: output,
                  spansPerRequest: OTLPExport.spansPerRequest)
    }

    func write(trace: Trace, profile: Profile, options: ViewOptions, to output: ByteOutput,
               spansPerRequest: Int) throws {
        var writer = OTLPRequestWriter(profile: profile, callCount: callCount, options: options, output: output,
                                   spansPerRequest: max(spansPerRequest, 1))
        var roots = OTLPExport.RootsSpan()
        for info in trace.threads {
            for run in threads[info.stream]?.pending.runs ?? [] { roots.add(start: run.firstStart, end: run.payload) }
        }
        writer.writeProcessSpan(roots: roots)
        let marks = OTLPExport.ThreadMarks(profile)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.recordsPerChunk * MemoryLayout<Record>.stride,
                                                            alignment: MemoryLayout<Record>.alignment)
        defer { buffer.deallocate() }
        var firstSpan = UInt64(2) // of the thread's calls
        for (index, info) in trace.threads.enumerated() {
            let thread = profile.threads[index]
            writer.beginThread(tid: thread.tid, name: thread.name)
            var placement = OTLPExport.MarkPlacement(marks.of(thread: index), of: profile)
            if let calls = threads[info.stream] {
                if !placement.isEmpty {
                    var call = 0
                    try forEachChunk(of: calls, backwards: false, buffer: buffer) { records in
                        for record in records {
                            placement.offer(call: call, start: record.start, end: record.end)
                            call += 1
                        }
                    }
                }
                // Backwards: a call before its children, each run's owner known before its calls.
                // Each pending run's owner: the span of the call that adopted it, as placed.
                let process = (span: OTLPRequestWriter.processSpan, start: Int64.min, end: Int64.max)
                var owners = Array(repeating: process, count: calls.pending.runs.count)
                var call = calls.count
                try forEachChunk(of: calls, backwards: true, buffer: buffer) { records in
                    for record in records.reversed() {
                        call -= 1
                        let owner = owners.last ?? process
                        let span = firstSpan + UInt64(call)
                        let time = OTLPExport.place(start: record.start, end: record.end,
                                                    inside: (owner.start, owner.end))
                        if !record.joined && !owners.isEmpty { owners.removeLast() }
                        owners.append(contentsOf: repeatElement((span: span, start: time.start, end: time.end), count: Int(record.adopted)))
                        writer.writeCall(function: Int(record.function), cost: record.cost,
                                         flags: ProfileThread.CallFlags(rawValue: record.flags), span: span,
                                         parent: owner.span, start: time.start, end: time.end,
                                         split: calls.splits[call])
                    }
                }
                firstSpan += UInt64(calls.count)
            }
            placement.write(with: &writer, firstSpan: firstSpan - UInt64(threads[info.stream]?.count ?? 0))
        }
        writer.writeOtherSpans(orphanMarks: marks.orphans)
    }

    /// Hands `body` the thread's records a chunk at a time, in the order written or backwards
    /// (the chunks backwards; each chunk's records still oldest first).
    private func forEachChunk(of calls: ThreadCalls, backwards: Bool, buffer: UnsafeMutableRawBufferPointer,
                              _ body: (UnsafeBufferPointer<Record>) -> Void) throws {
        func spooled(_ range: Range<Int>) throws {
            guard spool.read(range, into: buffer) else { throw SpoolFailure(errno: spool.failure) }
            let records = buffer.bindMemory(to: Record.self)
            body(UnsafeBufferPointer(rebasing: records[0..<(range.count / MemoryLayout<Record>.stride)]))
        }
        if backwards {
            calls.recent.withUnsafeBufferPointer { body($0) }
            for range in calls.chunks.reversed() { try spooled(range) }
        } else {
            for range in calls.chunks { try spooled(range) }
            calls.recent.withUnsafeBufferPointer { body($0) }
        }
    }
}
