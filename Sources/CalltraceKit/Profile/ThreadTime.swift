/// Where each thread's time went between its THREAD_STATE samples, and so each call's
/// `TimeSplit` (docs/design.md, "Why a call was slow").
///
/// Two consecutive samples of a thread bound an interval: its time on a CPU and its run delay grew
/// by known amounts, and the rest of the interval it was blocked. Where in the interval each part
/// fell is known only from the states at its two ends: a thread running at the first sample and
/// blocked at the second ran first, then blocked (and the other way round); one blocked in two
/// different things at the two ends was blocked in the first, ran, then blocked in the second
/// (each taking half the blocked time; but when a call starts or ends in the interval, the thread
/// ran then, its hooks did: the first thing's part ended before that instant, the second's began
/// after it); one running at both that blocked between did so in the middle, or, when a call
/// starts or ends in the interval, before its start or after its end where that fits (it woke,
/// then called); otherwise the parts are spread evenly over it. The blocked time is spent in what the
/// thread was blocked in at an end of the interval ("unknown" when it was running at both). A wait
/// for a CPU is counted when it ends: one under way at a sample shows in a later growth, and is
/// moved back to the intervals it went on in.
public struct ThreadTime: Sendable {
    enum Layout: Sendable { case runFirst, blockedFirst, blockedBoth, blockedMiddle, mixed }

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

    /// How many intervals back a wait for a CPU is carried, at most.
    static let carryLimit = 64

    /// A line's running sums, so that a call spanning many intervals costs a few binary searches
    /// (`sums[i]`: the intervals before `i`); and per reason, the intervals it has blocked time in
    /// with the running sum of that time (`byReason`), when the line has few enough reasons.
    struct Sums: Sendable {
        var cpu: [Double] = [0]
        var delay: [Double] = [0]
        var blocked: [Double] = [0]
        var byReason: [Int32: (indexes: [Int], before: [Double])]? = [:]
    }

    /// A call spanning more whole intervals than this is added up from `Sums`.
    static let directLimit = 256
    /// At most this many reasons a line for `Sums.byReason` (a crafted trace could have one an
    /// interval); past it, the blocked time of a long call's whole intervals is "unknown" what in.
    static let reasonLimit = 256

    private let lines: [UInt32: [Interval]]
    private let sums: [UInt32: Sums]
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
            let sorted = unsorted.sorted { $0.tick.count < $1.tick.count }
            let samples = zip(sorted, sorted.dropFirst()).filter { $1.tick.count > $0.tick.count }
            // Each interval's wall time, time on a CPU (never more than the wall time) and run-delay growth.
            let walls = samples.map { Double(clock.duration(ticks: Ticks($1.tick.count - $0.tick.count)).value) }
            let cpus = samples.indices.map { min(Double(max(samples[$0].1.cpu.value &- samples[$0].0.cpu.value, 0)),
                                                 walls[$0]) }
            let growths = samples.map { Double(max($1.runDelay.value &- $0.runDelay.value, 0)) }
            // schedstat counts a wait for a CPU when it ends, all of it: a wait under way at a
            // sample (the thread runnable, not blocked) shows in a later growth. So each growth
            // fills its own interval's time off a CPU, then, for what is left, the interval
            // before, and so on back while the wait can have gone on there. Later growths first:
            // the time an interval ends with, waiting, is a later growth's, so its own growth
            // fills only the rest (a thread runnable throughout, preempted again and again, has
            // every interval's waits right so). More than the room is the kernel's excess (its
            // clocks and ours differ): dropped.
            var delays = [Double](repeating: 0, count: samples.count)
            for index in samples.indices.reversed() where growths[index] > 0 {
                var left = growths[index]
                var at = index
                // At most `carryLimit` intervals back: a wait is never longer than that many
                // samples apart in a real trace, and a crafted one cannot make this quadratic.
                while left > 0, index - at < ThreadTime.carryLimit {
                    let take = min(left, max(0, walls[at] - cpus[at] - delays[at]))
                    delays[at] += take
                    left -= take
                    // Under way at this interval's first sample, if that found the thread runnable;
                    // and before, through all of an earlier interval with no CPU time.
                    guard at > 0, !samples[at].0.state.isBlocked, at == index || cpus[at] <= 0 else { break }
                    at -= 1
                }
            }
            var line: [Interval] = []
            for (index, (a, b)) in samples.enumerated() {
                let wall = walls[index]
                guard wall > 0 else { continue }
                let cpu = cpus[index]
                let delay = delays[index]
                let blocked = wall - cpu - delay
                let layout: Layout
                switch (a.state.isBlocked, b.state.isBlocked) {
                case (false, true): layout = .runFirst
                case (true, false): layout = .blockedFirst
                case (true, true): layout = a.state == b.state ? .mixed : .blockedBoth
                case (false, false): layout = blocked > 0 ? .blockedMiddle : .mixed
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
        self.sums = lines.mapValues(ThreadTime.sums)
    }

    /// The running sums of `line`, and per reason what a whole interval gives it (`split`).
    private static func sums(_ line: [Interval]) -> Sums {
        var sums = Sums()
        sums.cpu.reserveCapacity(line.count + 1)
        sums.delay.reserveCapacity(line.count + 1)
        sums.blocked.reserveCapacity(line.count + 1)
        for (index, part) in line.enumerated() {
            sums.cpu.append(sums.cpu[index] + part.cpu)
            sums.delay.append(sums.delay[index] + part.delay)
            sums.blocked.append(sums.blocked[index] + part.blocked)
            for (reason, time) in wholeReasons(part) where time > 0 {
                guard sums.byReason != nil else { break }
                var entry = sums.byReason![reason] ?? (indexes: [], before: [0])
                if entry.indexes.isEmpty && sums.byReason!.count >= reasonLimit {
                    sums.byReason = nil
                    break
                }
                entry.indexes.append(index)
                entry.before.append(entry.before[entry.before.count - 1] + time)
                sums.byReason![reason] = entry
            }
        }
        return sums
    }

    /// What a whole interval's blocked time was spent in (`split` over all of it).
    private static func wholeReasons(_ part: Interval) -> [(Int32, Double)] {
        guard part.blocked > 0 else { return [] }
        if part.layout == .blockedBoth { return [(part.firstReason, part.blocked / 2), (part.reason, part.blocked / 2)] }
        return [(part.reason, part.blocked)]
    }

    /// The first index of the sorted `values` at or after `value`.
    private static func lowerBound(_ values: [Int], _ value: Int) -> Int {
        var low = 0, high = values.count
        while low < high {
            let mid = (low + high) / 2
            if values[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
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
        // Past the last interval starting before the call's end.
        var last = low
        high = line.count
        while last < high {
            let mid = (last + high) / 2
            if line[mid].start < e { last = mid + 1 } else { high = mid }
        }
        var cpu = 0.0, delay = 0.0, blocked = 0.0
        var on: [Int32: Double] = [:]
        // The whole intervals between the first and the last, from the running sums when many.
        var skipFrom = Int.max, skipTo = Int.max
        var unnamedBlocked = 0.0  // blocked in what a line of too many reasons does not tell
        if last - low - 2 > ThreadTime.directLimit, let sums = sums[stream] {
            skipFrom = low + 1
            skipTo = last - 1
            cpu = sums.cpu[skipTo] - sums.cpu[skipFrom]
            delay = sums.delay[skipTo] - sums.delay[skipFrom]
            let wholeBlocked = sums.blocked[skipTo] - sums.blocked[skipFrom]
            blocked = wholeBlocked
            for (reason, entry) in sums.byReason ?? [:] {
                let a = ThreadTime.lowerBound(entry.indexes, skipFrom)
                let b = ThreadTime.lowerBound(entry.indexes, skipTo)
                let time = entry.before[b] - entry.before[a]
                if time > 0, reason >= 0 { on[reason, default: 0] += time }
            }
            if sums.byReason == nil, wholeBlocked > 0 { unnamedBlocked = wholeBlocked }
        }
        var index = low
        while index < last {
            if index == skipFrom {
                index = skipTo
                continue
            }
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
                // [first reason's part][running][second reason's part]: each reason takes half,
                // unless the call starts or ends in the interval. The thread ran then (its hooks
                // did), so the running part holds that instant: the first reason's part ended
                // before it, the second's began after it.
                var first = (1 - running) / 2
                let instants = [x0 > 0 ? x0 : nil, x1 < 1 ? x1 : nil].compactMap { $0 }
                if let latest = instants.max(), let earliest = instants.min(), latest - running <= earliest {
                    first = min(max(first, latest - running, 0), earliest, 1 - running)
                }
                firstShare = max(0, min(x1, first) - x0)
                runShare = max(0, min(x1, first + running) - max(x0, first))
                blockedShare = max(0, x1 - max(x0, first + running))
            case .blockedMiddle:
                // Running at both samples, blocked between: in the middle, unless the call starts
                // or ends in the interval. The thread ran then (its hooks did), so the blocked part
                // lies before the start (it woke, then called) or after the end when it fits.
                let k = 1 - running
                var from = (1 - k) / 2
                if x0 > 0 && k <= x0 { from = x0 - k } else if x1 < 1 && k <= 1 - x1 { from = x1 }
                blockedShare = max(0, min(x1, from + k) - max(x0, from))
                runShare = (x1 - x0) - blockedShare
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
            default:
                let take = min(blocked, excess)
                // What it was blocked in shrinks with it, so that it still adds up to `blocked`.
                let kept = blocked > 0 ? (blocked - take) / blocked : 0
                for key in on.keys { on[key]! *= kept }
                unnamedBlocked *= kept
                blocked -= take
                excess -= take
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
        if ns(unnamedBlocked) > .zero {
            if let i = blockedOn.firstIndex(where: { $0.what == "unknown" }) {
                blockedOn[i].time = blockedOn[i].time + ns(unnamedBlocked)
            } else {
                blockedOn.append(TimeSplit.BlockedOn(what: "unknown", time: ns(unnamedBlocked)))
            }
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
            case .blockedMiddle:
                add(cpu / 2, .running); add(delay / 2, .preempted); add(blocked, .blocked(reason))
                add(cpu / 2, .running); add(delay / 2, .preempted)
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
            if wchan.isEmpty || wchan == "0" { return "kernel wait" }  // the kernel hides where
            if faulting.contains(where: { wchan.contains($0) }) { return "page fault" }
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
