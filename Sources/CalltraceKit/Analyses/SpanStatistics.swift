/// Spans by name over one or more runs (`calltrace spans`): how many ended, the p50/p90/p99/max
/// of their durations (nearest rank, as `top`: `FunctionStatistics.percentile`), each milestone's
/// time from its span's begin (p50/p90), and the slowest instances with what happened inside them:
///
/// - calls: the slowest recorded calls on the threads the span began and ended on that began inside
///   it, outermost only (as `timeline` lists the calls between two points): a call that began
///   inside another such call is part of it;
/// - dropped frames: the frames (`calltrace_frame`) that began inside it, counted as `hitches`
///   counts them (`Hitches.dropped`);
/// - hangs: the main thread's hangs (`CALLTRACE_HANG`) captured inside it;
/// - its time on a CPU, preempted and blocked, and blocked in what, when it began and ended on one
///   sampled thread (`ProfileSpan.split`).
///
/// Unfinished spans (begun, never ended) are counted apart and listed as such; they are in no
/// percentile. Built by adding profiles one at a time, like `FunctionStatistics`: a profile can be
/// dropped once added; what is kept is one `Int64` per span and per milestone, and the worst
/// instances' details.
public struct SpanStatistics: Sendable {
    public struct Call: Sendable {
        public var function: String
        public var tid: UInt64
        /// From the span's begin (negative never: the call began inside it).
        public var start: Nanoseconds
        public var cost: Nanoseconds
    }

    public struct Hang: Sendable {
        /// When the stack was captured, from the span's begin.
        public var at: Nanoseconds
        /// The innermost open instrumented call then, and when it began (from the span's begin).
        public var function: String
        public var callStart: Nanoseconds
    }

    public struct Instance: Sendable {
        /// The trace it is from ("" for a profile built in memory).
        public var source: String
        public var extra: String
        public var begin: Instant
        /// How long it lasted; nil when it never ended.
        public var duration: Nanoseconds?
        /// An unfinished span: how long it had been open when the trace ended, when the trace says.
        public var openFor: Nanoseconds?
        public var beginTid: UInt64
        public var endTid: UInt64?
        /// Each milestone and its time from the begin.
        public var milestones: [(name: String, offset: Nanoseconds)]
        public var calls: [Call]
        public var droppedFrames: Int
        public var hangs: [Hang]
        /// Where its time went on its thread (`ProfileSpan.split`), nil when not known.
        public var split: TimeSplit?
    }

    public struct Milestone: Sendable {
        public var name: String
        /// Times from the begin, of the finished spans that reached it, sorted once `finish()` ran.
        public fileprivate(set) var offsets: [Int64] = []
        public func percentile(_ p: Int) -> Nanoseconds { FunctionStatistics.percentile(p, of: offsets) }
    }

    public struct Row: Sendable {
        public var name: String
        /// Durations of the finished spans, sorted once `finish()` ran.
        public fileprivate(set) var durations: [Int64] = []
        public fileprivate(set) var unfinished = 0
        /// In the order first seen.
        public fileprivate(set) var milestones: [Milestone] = []
        /// The slowest finished ones, slowest first, at most `limit`.
        public fileprivate(set) var worst: [Instance] = []
        /// The first `limit` unfinished ones, in the order met.
        public fileprivate(set) var unfinishedInstances: [Instance] = []

        public var count: Int { durations.count }
        public var max: Nanoseconds { Nanoseconds(durations.last ?? 0) }
        public func percentile(_ p: Int) -> Nanoseconds { FunctionStatistics.percentile(p, of: durations) }
    }

    /// By name, A to Z, once `finish()` ran.
    public private(set) var rows: [Row] = []
    /// How many profiles were added.
    public private(set) var runs = 0
    /// How many slowest (and unfinished) instances each row keeps.
    public let limit: Int
    private var index: [String: Int] = [:]

    static let callsPerInstance = 5

    public init(limit: Int = 5) { self.limit = Swift.max(limit, 0) }

    public init(_ profiles: [Profile], limit: Int = 5) {
        self.init(limit: limit)
        for profile in profiles { add(profile) }
        finish()
    }

    public mutating func add(_ profile: Profile) {
        runs += 1
        var finishedByRow: [Int: [Int]] = [:]
        for (position, span) in profile.spans.enumerated() {
            let row = rowIndex(span.name)
            guard let duration = span.duration else {
                rows[row].unfinished += 1
                if rows[row].unfinishedInstances.count < limit {
                    rows[row].unfinishedInstances.append(instance(span, in: profile))
                }
                continue
            }
            rows[row].durations.append(duration.value)
            for milestone in span.milestones {
                let offset = (milestone.at - span.begin).value
                if let m = rows[row].milestones.firstIndex(where: { $0.name == milestone.name }) {
                    rows[row].milestones[m].offsets.append(offset)
                } else {
                    rows[row].milestones.append(Milestone(name: milestone.name, offsets: [offset]))
                }
            }
            finishedByRow[row, default: []].append(position)
        }
        // Details only for the spans that may be among the slowest.
        for (row, positions) in finishedByRow {
            let slowest = positions.sorted { slower(profile.spans[$0], than: profile.spans[$1]) }.prefix(limit)
            rows[row].worst += slowest.map { instance(profile.spans[$0], in: profile) }
            rows[row].worst.sort { a, b in
                let (da, db) = (a.duration ?? .zero, b.duration ?? .zero)
                return da != db ? da > db : a.begin < b.begin
            }
            rows[row].worst = Array(rows[row].worst.prefix(limit))
        }
    }

    public mutating func finish() {
        for row in rows.indices {
            rows[row].durations.sort()
            for m in rows[row].milestones.indices { rows[row].milestones[m].offsets.sort() }
        }
        rows.sort { $0.name < $1.name }
        index = Dictionary(uniqueKeysWithValues: rows.enumerated().map { ($1.name, $0) })
    }

    private mutating func rowIndex(_ name: String) -> Int {
        if let row = index[name] { return row }
        index[name] = rows.count
        rows.append(Row(name: name))
        return rows.count - 1
    }

    /// Longer first; of equal ones the earlier.
    private func slower(_ a: ProfileSpan, than b: ProfileSpan) -> Bool {
        let (da, db) = (a.duration ?? .zero, b.duration ?? .zero)
        return da != db ? da > db : a.begin < b.begin
    }

    private func instance(_ span: ProfileSpan, in profile: Profile) -> Instance {
        // An unfinished span reaches to the end of the trace for what happened inside it.
        let end = span.end ?? profile.ended
        let openFor = span.end == nil ? profile.ended.map { $0 - span.begin } : nil
        var instance = Instance(source: profile.source, extra: span.extra, begin: span.begin, duration: span.duration,
                                openFor: openFor, beginTid: span.beginTid, endTid: span.endTid,
                                milestones: span.milestones.map { ($0.name, $0.at - span.begin) },
                                calls: [], droppedFrames: 0, hangs: [], split: span.split)
        guard let end else { return instance }
        instance.calls = calls(from: span.begin, to: end, tids: [span.beginTid] + (span.endTid.map { [$0] } ?? []),
                               in: profile)
        instance.droppedFrames = Hitches.dropped(frames: profile.frames, interval: profile.frameInterval,
                                                 from: span.begin, to: end)
        instance.hangs = profile.hangs.filter { $0.at >= span.begin && $0.at <= end }.map {
            Hang(at: $0.at - span.begin, function: profile.functions[$0.function].name,
                 callStart: $0.callStart - span.begin)
        }
        return instance
    }

    /// The outermost calls on `tids` that began in [from, to), slowest first (at most
    /// `callsPerInstance`). A walk down the tree, not over every call: siblings are by start, so a
    /// walk stops at the first that begins at `to` or later, and goes into a call only when it began
    /// before `from` and was still running then.
    private func calls(from: Instant, to: Instant, tids: [UInt64], in profile: Profile) -> [Call] {
        var found: [Call] = []
        var seen = Set<UInt64>()
        for tid in tids where seen.insert(tid).inserted {
            guard let thread = profile.threads.first(where: { $0.tid == tid }) else { continue }
            var pending: [Int32] = []
            func visit(_ first: Int32, next: (Int32) -> Int32) {
                var node = first
                while node >= 0 {
                    let call = Int(node)
                    let start = thread.start(call)
                    if start >= to { break }
                    if start >= from {
                        found.append(Call(function: profile.functions[Int(thread.function[call])].name, tid: tid,
                                          start: start - from, cost: thread.cost(call)))
                    } else if start + thread.cost(call) > from {
                        pending.append(thread.firstChild[call])
                    }
                    node = next(node)
                }
            }
            var rootIndex = 0
            visit(thread.roots.first ?? -1) { _ in
                rootIndex += 1
                return rootIndex < thread.roots.count ? thread.roots[rootIndex] : -1
            }
            while let first = pending.popLast() { visit(first) { thread.nextSibling[Int($0)] } }
        }
        found.sort { $0.cost != $1.cost ? $0.cost > $1.cost : $0.start < $1.start }
        return Array(found.prefix(SpanStatistics.callsPerInstance))
    }
}
