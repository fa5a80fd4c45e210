/// Frames and dropped frames (KSScrollPerformanceDetector's measure): an interval between two frame
/// starts that lasts k target intervals (rounded) drops k - 1 frames. A drop event is an interval
/// that dropped any. Each of the worst hitches lists the calls that caused it: the deepest calls on
/// the frame thread that ran for at least one target interval inside it (or, when no call did, the
/// calls that ran longest inside it), with its path: the functions of the calls it was made in,
/// outermost first, ending with its own, so a drop points at the code behind it and at where that
/// code was called from. Both hitches formats read this.
struct Hitches {
    struct Hitch {
        var start: Instant
        var duration: Nanoseconds
        var dropped: Int
        var calls: [Cause] = []
    }

    /// A call behind a hitch: its function, when it started, its whole cost, how long it ran
    /// inside the hitch, and its path (indexes into `Profile.functions`, the thread's outermost
    /// call first, `function` last).
    struct Cause {
        var function: Int
        var start: Instant
        var cost: Nanoseconds
        var overlap: Nanoseconds
        var path: [Int]
        /// Where the call's cost went (`ProfileThread.split`): what it was blocked in.
        var split: TimeSplit?
    }

    var interval: Nanoseconds
    var frames: Int
    var span: Nanoseconds
    var dropped = 0
    var dropEvents = 0
    var worstDrop = 0
    /// The worst hitches, most frames dropped first (then longest), at most `limit`.
    var worst: [Hitch] = []

    static let callsPerHitch = 5

    init(profile: Profile, interval: Nanoseconds?, limit: Int) {
        self.interval = max(interval ?? profile.frameInterval, Nanoseconds(1))
        let frames = profile.frames
        self.frames = frames.count
        span = frames.count > 1 ? frames[frames.count - 1] - frames[0] : .zero
        var all: [Hitch] = []
        for (start, end) in zip(frames, frames.dropFirst()) {
            let duration = end - start
            let dropped = Hitches.dropped(in: duration, interval: self.interval)
            guard dropped > 0 else { continue }
            self.dropped += dropped
            dropEvents += 1
            worstDrop = max(worstDrop, dropped)
            all.append(Hitch(start: start, duration: duration, dropped: dropped))
        }
        all.sort { ($0.dropped, $0.duration, $1.start) > ($1.dropped, $1.duration, $0.start) }
        worst = Array(all.prefix(limit > 0 ? limit : 10))
        if let thread = profile.threads.first(where: { $0.tid == profile.frameThread }) ?? profile.mainThread {
            for index in worst.indices { worst[index].calls = causes(of: worst[index], in: thread) }
        }
    }

    /// The frames a frame lasting `duration` dropped: whole target intervals, rounded half up
    /// (1.5 intervals drop one frame), less one.
    static func dropped(in duration: Nanoseconds, interval: Nanoseconds) -> Int {
        let interval = max(interval, Nanoseconds(1))
        let k = (duration.value + interval.value / 2) / interval.value
        return Int(max(k - 1, 0))
    }

    /// The frames dropped by the frames (`frames`: starts, by time) that began in [from, to).
    static func dropped(frames: [Instant], interval: Nanoseconds, from: Instant, to: Instant) -> Int {
        var total = 0
        for (start, end) in zip(frames, frames.dropFirst()) where start >= from && start < to {
            total += dropped(in: end - start, interval: interval)
        }
        return total
    }

    private func causes(of hitch: Hitch, in thread: ProfileThread) -> [Cause] {
        let from = hitch.start.sinceStart.value
        let to = from + hitch.duration.value
        func overlap(_ call: Int) -> Int64 {
            min(to, thread.start(call).sinceStart.value + thread.cost(call).value) - max(from, thread.start(call).sinceStart.value)
        }
        var long: [Int] = []
        var any: [(call: Int, overlap: Int64)] = []
        for call in 0..<thread.count {
            let o = overlap(call)
            guard o > 0 else { continue }
            any.append((call, o))
            if o >= interval.value { long.append(call) }
        }
        // The deepest of the long ones: none of its children ran that long inside the hitch.
        let longSet = Set(long)
        var chosen = long.filter { call in !thread.children(of: call).contains { longSet.contains($0) } }
        if chosen.isEmpty { chosen = any.sorted { $0.overlap > $1.overlap }.map(\.call) }
        return chosen.sorted { overlap($0) > overlap($1) }.prefix(Hitches.callsPerHitch).map { call in
            Cause(function: Int(thread.function[call]), start: thread.start(call), cost: thread.cost(call),
                  overlap: Nanoseconds(overlap(call)), path: path(to: call, in: thread),
                  split: thread.split(call))
        }
    }

    /// The functions from the thread's outermost call down to `call`, by the tree's parent links.
    private func path(to call: Int, in thread: ProfileThread) -> [Int] {
        var path: [Int] = []
        var current = Int32(call)
        while current >= 0 {
            path.append(Int(thread.function[Int(current)]))
            current = thread.parent[Int(current)]
        }
        return path.reversed()
    }
}
