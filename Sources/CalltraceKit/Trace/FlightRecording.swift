/// A flight recorder's trace (`CALLTRACE_LIMIT`, `record --limit`): the file never grew past
/// `limit`, and once it was full the runtime reused its oldest blocks of calls, so the trace holds
/// the newest calls. What it still covers, and what it gave up. Metadata (modules, threads, muted
/// functions) is never overwritten; events (frames, marks, spans, hangs) are, oldest first, except
/// spans still open and each mark name's latest mark. A call whose children were overwritten keeps
/// its whole duration, their time counted as its own.
public struct FlightRecording: Equatable, Sendable {
    /// The file's size limit in bytes.
    public var limit: UInt64
    /// Blocks reused, and the CALL records they held (no longer in the trace).
    public var overwrittenBlocks: UInt64
    public var overwrittenCalls: UInt64
    /// The earliest and the latest end of the calls the trace holds (records are written as calls
    /// end, so the reused blocks held calls that ended before `coveredFrom`), from the runtime's
    /// start (its init tick); nil when it holds none.
    public var coveredFrom: Nanoseconds?
    public var coveredTo: Nanoseconds?
    /// The oldest events were overwritten too (the events stream's first pieces are gone).
    public var eventsOverwritten = false

    init(header: TraceHeader, firstTick: Ticks?, lastTick: Ticks?) {
        limit = header.limit
        overwrittenBlocks = header.overwrittenBlocks
        overwrittenCalls = header.overwrittenCalls
        let clock = TickClock(header: header)
        let start = clock.monotonic(tick: header.initTick)
        coveredFrom = firstTick.map { clock.monotonic(tick: $0) - start }
        coveredTo = lastTick.map { clock.monotonic(tick: $0) - start }
    }

    /// "calls that ended from 1.234567 s to 5.678901 s after the runtime started"
    public var coveredText: String {
        guard let from = coveredFrom, let to = coveredTo else { return "no calls" }
        return "calls that ended from \(TextFormat.seconds(from)) s to \(TextFormat.seconds(to)) s after the runtime started"
    }

    /// "2.00 MiB; 12345 calls overwritten (40 blocks); calls from ..."
    public var text: String {
        // Hundredths of a MiB, without overflow for any header value.
        let hundredths = limit / (1 << 20) * 100 + limit % (1 << 20) * 100 / (1 << 20)
        let mib = TextFormat.fixed(Int64(clamping: hundredths), scale: 2, decimals: 2)
        let overwritten = overwrittenBlocks == 0 ? "nothing overwritten"
            : "\(overwrittenCalls) call\(overwrittenCalls == 1 ? "" : "s") overwritten (\(overwrittenBlocks) block\(overwrittenBlocks == 1 ? "" : "s"))"
        let events = eventsOverwritten
            ? "; older events overwritten too (frames, marks, hangs, ended spans: spans still open and each mark name's latest are kept)"
            : ""
        return "\(mib) MiB; \(overwritten); \(coveredText)\(events)"
    }

    /// The report's header line: which part of the run the costs shown come from.
    public var reportLine: String {
        let head = "recorded with CALLTRACE_LIMIT (a flight recorder): "
        guard overwrittenBlocks > 0 else { return head + "nothing overwritten; " + coveredText }
        return head + "the oldest \(overwrittenCalls) call\(overwrittenCalls == 1 ? " was" : "s were") overwritten; "
            + "shown: " + coveredText
    }
}
