/// Preempted time: how much of a call's cost its thread spent runnable but waiting for a CPU,
/// estimated from a version 3 trace's RUN_DELAY samples (docs/design.md, "Why a call was slow";
/// a version 4 trace's THREAD_STATE samples give it through `ThreadTime` instead).
///
/// Each sample says that a thread's waits that ended between two samples (2 to 8 ms apart) added
/// up to `delay`. Where in the interval they fell is not known, so the delay is spread evenly over
/// it; and since a wait is counted only when it ends, a delay longer than its interval is spread
/// over the `delay` before the sample instead (but not back into the thread's previous span).
/// A call's preempted time is the sum over the spans it overlaps of delay x the overlapped share of
/// the span: good to a few milliseconds, so only calls of several milliseconds are judged by it.
public struct Preemption: Sendable {
    /// A call is marked `(preempted X ms)` when it waited at least this long...
    public static let markMinimum = Nanoseconds(1_000_000)
    /// ...and for at least 1/`markShareDivisor` (a quarter) of its cost.
    public static let markShareDivisor: Int64 = 4

    /// One thread's delay spans: sorted, disjoint; `before[i]` is the delay of the spans before `i`.
    private struct Timeline: Sendable {
        var starts: [UInt64] = []
        var ends: [UInt64] = []
        var delays: [Int64] = []
        var before: [Int64] = []
    }

    private let timelines: [UInt32: Timeline]
    private let clock: TickClock
    /// The header's `sched_flags` (`TraceFormat.SchedFlag`).
    public let flags: UInt32

    public init(trace: Trace) {
        flags = trace.header.schedFlags
        let clock = trace.clock
        self.clock = clock
        var timelines: [UInt32: Timeline] = [:]
        for (stream, samples) in Dictionary(grouping: trace.runDelays, by: \.stream) {
            var line = Timeline()
            var previousEnd: UInt64 = 0
            for sample in samples.sorted(by: { $0.endTick < $1.endTick }) where sample.delay > .zero {
                let end = sample.endTick.count
                let spread = clock.ticks(in: sample.delay).count
                // The waits ended in the interval; one longer than it began before it.
                var start = min(sample.startTick.count, end >= spread ? end - spread : 0)
                start = max(start, previousEnd)
                guard start < end else { continue }
                line.starts.append(start)
                line.ends.append(end)
                line.before.append((line.before.last ?? 0) &+ (line.delays.last ?? 0))
                line.delays.append(sample.delay.value)
                previousEnd = end
            }
            if !line.starts.isEmpty { timelines[stream] = line }
        }
        self.timelines = timelines
    }

    /// Run delay was sampled for the trace (a runtime that samples, on a kernel that keeps it).
    public var isSampled: Bool { flags & TraceFormat.SchedFlag.sampled != 0 }
    /// The runtime tried, but the kernel has no schedstat files.
    public var isUnavailable: Bool { flags & TraceFormat.SchedFlag.unavailable != 0 }
    /// Some recording threads were not sampled.
    public var isPartial: Bool { flags & TraceFormat.SchedFlag.partial != 0 }
    /// Any thread waited for a CPU at all.
    public var hasDelays: Bool { !timelines.isEmpty }

    /// How much of `record`'s time its thread was runnable but not running (estimated), at most
    /// its cost.
    public func preempted(_ record: CallRecord) -> Nanoseconds {
        guard let line = timelines[record.stream], record.durationTicks > .zero else { return .zero }
        let start = record.startTick.count
        let end = record.endTick.count
        // Spans first..<last overlap the call: the first one ending after its start, up to the
        // first one starting at or after its end.
        let first = Preemption.partition(line.ends) { $0 <= start }
        let last = Preemption.partition(line.starts) { $0 < end }
        guard first < last else { return .zero }
        func share(_ i: Int) -> Double {
            let overlap = min(end, line.ends[i]) - max(start, line.starts[i])
            return Double(line.delays[i]) * Double(overlap) / Double(line.ends[i] - line.starts[i])
        }
        var total = share(first)
        if last - 1 > first {
            total += share(last - 1)
            // The spans between lie wholly inside the call.
            total += Double(line.before[last - 1] &- line.before[first] &- line.delays[first])
        }
        // A damaged trace's delays may add up to anything: never trap converting them.
        let ns = total.isNaN || total <= 0 ? 0 : total >= 9.2e18 ? Int64.max : Int64(total.rounded())
        return min(Nanoseconds(ns), clock.duration(ticks: record.durationTicks))
    }

    /// Whether a call of `cost` that waited `preempted` of it gets the `(preempted X ms)` mark.
    public static func isMarked(cost: Nanoseconds, preempted: Nanoseconds) -> Bool {
        let (scaled, overflow) = preempted.value.multipliedReportingOverflow(by: markShareDivisor)
        return preempted >= markMinimum && (overflow || scaled >= cost.value)
    }

    /// Whether a call reached `threshold` only by waiting for a CPU: its cost without the
    /// preempted time is under it (`report --hide-preempted` leaves such calls out).
    public static func crossedOnlyByPreemption(cost: Nanoseconds, preempted: Nanoseconds,
                                               threshold: Nanoseconds) -> Bool {
        preempted > .zero && cost - preempted < threshold
    }

    /// The first index whose element fails `isBefore` (elements are sorted so that those that
    /// pass come first).
    private static func partition(_ values: [UInt64], _ isBefore: (UInt64) -> Bool) -> Int {
        var low = 0
        var high = values.count
        while low < high {
            let mid = (low + high) / 2
            if isBefore(values[mid]) { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
