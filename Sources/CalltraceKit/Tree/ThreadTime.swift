/// Where each thread's time went between its THREAD_STATE samples, and so each call's
/// `TimeSplit` (docs/design.md, "Why a call was slow").
///
/// Two consecutive samples of a thread bound an interval: its time on a CPU and its run delay grew
/// by known amounts, and the rest of the interval it was blocked. Where in the interval each part
/// fell is known only from the states at its two ends: a thread running at the first sample and
/// blocked at the second ran first, then blocked (and the other way round); one blocked in two
/// different things at the two ends was blocked in the first, ran, then blocked in the second
/// (each taking half the blocked time); otherwise the parts are spread evenly over it. The blocked
/// time is spent in what the thread was blocked in at an end of the interval ("unknown" when it
/// was running at both).
public struct ThreadTime: Sendable {
    enum Layout: Sendable { case runFirst, blockedFirst, blockedBoth, mixed }

    struct Interval: Sendable {
        var start: UInt64
        var end: UInt64
        /// Nanoseconds of the interval on a CPU, waiting for one, and blocked (they add up to its
        /// length).
        var cpu: Double
        var delay: Double
        var blocked: Double
        var layout: Layout
        /// Index into `reasons`: what the blocked time was spent in (with `.blockedBoth`, its second half).
        var reason: Int32
        /// With `.blockedBoth`: what the first half of the blocked time was spent in.
        var firstReason: Int32
    }

    private let lines: [UInt32: [Interval]]
    private let reasons: [String]
    private let clock: TickClock
    /// The header's `sched_flags` (`TraceFormat.SchedFlag`).
    public let flags: UInt32

    /// `dataSymbol` names the variable at an address (a lock's, for a futex), when it can.
    public init(samples: [ThreadStateSample], clock: TickClock, flags: UInt32,
                dataSymbol: (UInt64) -> String? = { _ in nil }) {
        self.clock = clock
        self.flags = flags
        var reasons: [String] = []
        var reasonIndex: [String: Int32] = [:]
        func reason(_ state: ThreadStateSample.State) -> Int32 {
            let what = ThreadTime.describe(state, dataSymbol: dataSymbol)
            if let known = reasonIndex[what] { return known }
            reasons.append(what)
            reasonIndex[what] = Int32(reasons.count - 1)
            return Int32(reasons.count - 1)
        }
        var lines: [UInt32: [Interval]] = [:]
        for (stream, unsorted) in Dictionary(grouping: samples, by: \.stream) {
            let samples = unsorted.sorted { $0.tick.count < $1.tick.count }
            var line: [Interval] = []
            for (a, b) in zip(samples, samples.dropFirst()) where b.tick.count > a.tick.count {
                let wall = Double(clock.duration(ticks: Ticks(b.tick.count - a.tick.count)).value)
                guard wall > 0 else { continue }
                // schedstat's time on a CPU is brought up to date at the scheduler's ticks, and a
                // wait is counted when it ends: a growth may exceed its interval. Never more than it.
                let cpu = min(Double(max(b.cpu.value &- a.cpu.value, 0)), wall)
                let delay = min(Double(max(b.runDelay.value &- a.runDelay.value, 0)), wall - cpu)
                let blocked = wall - cpu - delay
                let layout: Layout
                switch (a.state.isBlocked, b.state.isBlocked) {
                case (false, true): layout = .runFirst
                case (true, false): layout = .blockedFirst
                case (true, true): layout = a.state == b.state ? .mixed : .blockedBoth
                case (false, false): layout = .mixed
                }
                let cause = b.state.isBlocked ? b.state : a.state.isBlocked ? a.state : .unknown
                let hasBlocked = blocked > 0
                line.append(Interval(start: a.tick.count, end: b.tick.count, cpu: cpu, delay: delay, blocked: blocked,
                                     layout: layout, reason: hasBlocked ? reason(cause) : -1,
                                     firstReason: hasBlocked && layout == .blockedBoth ? reason(a.state) : -1))
            }
            if !line.isEmpty { lines[stream] = line }
        }
        self.lines = lines
        self.reasons = reasons
    }

    public init(trace: Trace, dataSymbol: (UInt64) -> String? = { _ in nil }) {
        self.init(samples: trace.threadStates, clock: trace.clock, flags: trace.header.schedFlags,
                  dataSymbol: dataSymbol)
    }

    /// Any thread was sampled at all.
    public var hasSamples: Bool { !lines.isEmpty }

    /// How the call from `start` to `end` ticks on `stream`, of `cost`, split; nil when no sample
    /// interval of its thread overlaps it (the thread was not sampled, or the kernel hides the
    /// files). The parts are of the call's wall time; the hooks' overhead taken out of its cost
    /// comes out of its time on a CPU.
    public func split(stream: UInt32, start: Ticks, end: Ticks, cost: Nanoseconds) -> TimeSplit? {
        guard let line = lines[stream], end.count > start.count else { return nil }
        let s = start.count, e = end.count
        // The first interval ending after the call's start.
        var low = 0, high = line.count
        while low < high {
            let mid = (low + high) / 2
            if line[mid].end <= s { low = mid + 1 } else { high = mid }
        }
        guard low < line.count, line[low].start < e else { return nil }
        var cpu = 0.0, delay = 0.0, blocked = 0.0
        var on: [Int32: Double] = [:]
        var index = low
        while index < line.count, line[index].start < e {
            let part = line[index]
            let length = Double(part.end - part.start)
            // The overlap as fractions of the interval.
            let x0 = Double(max(s, part.start) - part.start) / length
            let x1 = Double(min(e, part.end) - part.start) / length
            let wall = part.cpu + part.delay + part.blocked
            let running = (part.cpu + part.delay) / wall
            var runShare = 0.0, blockedShare = 0.0, firstShare = 0.0
            switch part.layout {
            case .runFirst:
                runShare = max(0, min(x1, running) - x0)
                blockedShare = max(0, x1 - max(x0, running))
            case .blockedFirst:
                blockedShare = max(0, min(x1, 1 - running) - x0)
                runShare = max(0, x1 - max(x0, 1 - running))
            case .blockedBoth:
                // [first reason's half][running][second reason's half]
                let half = (1 - running) / 2
                firstShare = max(0, min(x1, half) - x0)
                runShare = max(0, min(x1, half + running) - max(x0, half))
                blockedShare = max(0, x1 - max(x0, half + running))
            case .mixed:
                runShare = (x1 - x0) * running
                blockedShare = (x1 - x0) * (1 - running)
            }
            if firstShare > 0 {
                let b = firstShare * wall
                blocked += b
                if part.firstReason >= 0 { on[part.firstReason, default: 0] += b }
            }
            if running > 0 {
                cpu += runShare * wall * (part.cpu / (part.cpu + part.delay))
                delay += runShare * wall * (part.delay / (part.cpu + part.delay))
            }
            let b = blockedShare * wall
            blocked += b
            if b > 0, part.reason >= 0 { on[part.reason, default: 0] += b }
            index += 1
        }
        let callWall = Double(clock.duration(ticks: Ticks(e - s)).value)
        var unknown = max(0, callWall - cpu - delay - blocked)
        // The overhead taken out of the cost was time on a CPU (the hooks').
        var excess = max(0, callWall - Double(cost.value))
        for part in [0, 1, 2, 3] where excess > 0 {
            switch part {
            case 0: let take = min(cpu, excess); cpu -= take; excess -= take
            case 1: let take = min(unknown, excess); unknown -= take; excess -= take
            case 2: let take = min(delay, excess); delay -= take; excess -= take
            default: let take = min(blocked, excess); blocked -= take; excess -= take
            }
        }
        func ns(_ value: Double) -> Nanoseconds {
            if value.isNaN || value <= 0 { return .zero }
            if value >= 9.2e18 { return Nanoseconds(Int64.max) }
            return Nanoseconds(Int64(value.rounded()))
        }
        var blockedOn: [TimeSplit.BlockedOn] = []
        for (reason, time) in on where ns(time) > .zero {
            blockedOn.append(TimeSplit.BlockedOn(what: reasons[Int(reason)], time: ns(time)))
        }
        blockedOn.sort { $0.time != $1.time ? $0.time > $1.time : $0.what < $1.what }
        return TimeSplit(cpu: ns(cpu), preempted: ns(delay), blocked: ns(blocked), unknown: ns(unknown),
                         blockedOn: blockedOn)
    }

    /// A stretch of a sampled thread's time in one state, as `segments(stream:)` lays it out.
    public struct Segment: Equatable, Sendable {
        public enum State: Equatable, Sendable {
            case running
            /// Runnable, waiting for a CPU.
            case preempted
            /// Blocked in `what` (`describe`: "read pipe", "futex", "unknown").
            case blocked(String)
        }

        public var start: Ticks
        public var end: Ticks
        public var state: State
    }

    /// The streams with samples, in no particular order.
    public var sampledStreams: [UInt32] { Array(lines.keys) }

    /// `stream`'s sampled time as segments, in time order: each interval between two samples laid
    /// out as `split` reads it (running first, then blocked, and so on), its time on a CPU before
    /// its run delay where they fall together (where in the interval the wait fell is not known).
    /// An interval whose parts are spread evenly over it (`.mixed`) is drawn running, preempted,
    /// then blocked. Empty segments are left out; an unsampled stream has none.
    public func segments(stream: UInt32) -> [Segment] {
        guard let line = lines[stream] else { return [] }
        var segments: [Segment] = []
        for part in line {
            let wall = part.cpu + part.delay + part.blocked
            guard wall > 0 else { continue }
            let length = Double(part.end - part.start)
            var at = 0.0  // fraction of the interval laid out so far
            // The tick `fraction` of the way through (never past its end, whatever the rounding).
            func tick(_ fraction: Double) -> UInt64 {
                let offset = fraction * length
                guard fraction < 1, offset < 1.8e19 else { return part.end }
                let (tick, overflow) = part.start.addingReportingOverflow(UInt64(max(offset, 0)))
                return overflow ? part.end : min(tick, part.end)
            }
            func add(_ fraction: Double, _ state: Segment.State) {
                guard fraction > 0 else { return }
                let from = tick(at)
                at += fraction
                let to = tick(at)
                if to > from { segments.append(Segment(start: Ticks(from), end: Ticks(to), state: state)) }
            }
            let (cpu, delay, blocked) = (part.cpu / wall, part.delay / wall, part.blocked / wall)
            let reason = part.reason >= 0 ? reasons[Int(part.reason)] : "unknown"
            switch part.layout {
            case .runFirst, .mixed:
                add(cpu, .running); add(delay, .preempted); add(blocked, .blocked(reason))
            case .blockedFirst:
                add(blocked, .blocked(reason)); add(cpu, .running); add(delay, .preempted)
            case .blockedBoth:
                let first = part.firstReason >= 0 ? reasons[Int(part.firstReason)] : "unknown"
                add(blocked / 2, .blocked(first)); add(cpu, .running); add(delay, .preempted)
                add(blocked / 2, .blocked(reason))
            }
        }
        return segments
    }

    /// What a blocked state is, as a user thinks of it.
    public static func describe(_ state: ThreadStateSample.State, dataSymbol: (UInt64) -> String?) -> String {
        switch state {
        case .running, .unknown:
            return "unknown"
        case .kernel(let wchan):
            let faulting = ["fault", "folio", "page", "filemap", "io_schedule", "swap"]
            if wchan.isEmpty || wchan == "0" || faulting.contains(where: { wchan.contains($0) }) { return "page fault" }
            return "kernel \(wchan)"
        case .syscall(_, let name, let argument, let target):
            if name == "futex" {
                if let symbol = dataSymbol(argument) { return "futex \(symbol)" }
                return "futex"
            }
            guard !target.isEmpty else { return name }
            let what: String
            if target.hasPrefix("pipe:") {
                what = "pipe"
            } else if target.hasPrefix("socket:") {
                let socketCalls: Set<String> = ["connect", "accept", "recv", "send", "recvmsg", "sendmsg",
                                                "recvmmsg", "sendmmsg"]
                if socketCalls.contains(name) { return name }
                what = "socket"
            } else if target.hasPrefix("anon_inode:") {
                what = String(target.dropFirst("anon_inode:".count)).trimmingCharacters(in: ["[", "]"])
            } else {
                what = target
            }
            return "\(name) \(what)"
        }
    }
}
