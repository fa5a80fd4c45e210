/// The process's life as points in time, from process creation: process start, runtime start,
/// static constructors (each instrumented call on the main thread that began before `main` is a
/// root of its own), `main` entered, each mark, each span's begin and end (an interval: the begin
/// says how long it lasted, or that it never ended), the end. Between two points, the slow calls that
/// began there (the outermost recorded calls on the main thread that started in the interval).
/// Phases, named like Meituan's launch phases: T1 from process start to `main`, T2 from `main` to
/// the ready mark (`--ready`), T3 from it to the end. Both timeline formats read this.
struct Timeline {
    struct Point {
        enum Kind: String {
            case processStart = "process_start", runtimeStart = "runtime_start", constructor, main, mark, end
            case spanBegin = "span_begin", spanEnd = "span_end"
        }
        var kind: Kind
        var name: String
        var extra = ""
        var at: Instant
        /// A constructor's cost.
        var cost: Nanoseconds?
        var tid: UInt64?
        /// A span's begin: how long the span lasted; nil when it never ended (`unfinished`).
        var duration: Nanoseconds?
        var unfinished = false
        /// The slow calls that began between this point and the next: function index, cost, start.
        var calls: [(function: Int, cost: Nanoseconds, start: Instant)] = []
    }

    struct Phase {
        var name: String
        var from: String
        var to: String
        var duration: Nanoseconds
    }

    var points: [Point] = []
    var phases: [Phase] = []
    /// Constructors' time together (the part of T1 the program's own code took).
    var constructors = Nanoseconds.zero
    /// Said instead of a phase that cannot be measured (a `--ready` mark that never came).
    var notes: [String] = []

    /// How many slow calls to list between two points.
    static let callsPerInterval = 5

    init(profile: Profile, readyMark: String?) {
        let main = profile.mainThread
        if profile.processStartKnown { points.append(Point(kind: .processStart, name: "process start", at: .start)) }
        points.append(Point(kind: .runtimeStart, name: "runtime start", at: profile.runtimeStarted))
        // Constructors: the main thread's top-level calls that began before main did.
        if let main, let mainEntered = profile.mainEntered {
            for root in main.roots.map(Int.init) where main.start(root) < mainEntered {
                var point = Point(kind: .constructor, name: profile.functions[Int(main.function[root])].name,
                                  at: main.start(root))
                point.cost = main.cost(root)
                points.append(point)
                constructors = constructors + main.cost(root)
            }
        }
        if let mainEntered = profile.mainEntered { points.append(Point(kind: .main, name: "main entered", at: mainEntered)) }
        for mark in profile.marks {
            points.append(Point(kind: .mark, name: mark.name, extra: mark.extra, at: mark.at, tid: mark.tid))
        }
        for span in profile.spans {
            var begin = Point(kind: .spanBegin, name: span.name, extra: span.extra, at: span.begin, tid: span.beginTid)
            begin.duration = span.duration
            begin.unfinished = span.isUnfinished
            points.append(begin)
            if let end = span.end { points.append(Point(kind: .spanEnd, name: span.name, at: end, tid: span.endTid)) }
        }
        // Stable by time: points at the same instant keep the order above.
        points = points.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
        let end = profile.ended ?? Timeline.lastInstant(profile)
        let endName: String
        switch profile.exit {
        case .clean: endName = "exit"
        case .crashed(let signal): endName = "crash (signal \(signal))"
        case .stillRunning: endName = "still running (trace read so far)"
        case .unknown: endName = "end of trace (killed, or the trace was not closed)"
        }
        if let end { points.append(Point(kind: .end, name: endName, at: max(end, points.last?.at ?? .start))) }
        if let main { attachCalls(main, mainEntered: profile.mainEntered) }
        makePhases(profile: profile, readyMark: readyMark, end: end)
    }

    /// The slow calls under each point: the outermost calls that began at or after it and before
    /// the next point. Constructors and `main` are points themselves, so their own calls are left
    /// out and their children count as outermost.
    private mutating func attachCalls(_ main: ProfileThread, mainEntered: Instant?) {
        let starts = points.map(\.at.sinceStart.value)
        /// The last point at or before `start`.
        func interval(of start: Int64) -> Int? {
            var low = 0
            var high = starts.count
            while low < high {
                let mid = (low + high) / 2
                if starts[mid] <= start { low = mid + 1 } else { high = mid }
            }
            return low > 0 ? low - 1 : nil
        }
        let mainRoot = mainEntered.flatMap { entered in
            main.roots.map(Int.init).first { main.start($0) >= entered }
        }
        func isPoint(_ call: Int) -> Bool {
            main.parent[call] < 0 && (call == mainRoot || mainEntered.map { main.start(call) < $0 } ?? false)
        }
        var found: [[(function: Int, cost: Nanoseconds, start: Instant)]] = Array(repeating: [], count: points.count)
        for call in 0..<main.count where !isPoint(call) {
            guard let index = interval(of: main.start(call).sinceStart.value) else { continue }
            let parent = Int(main.parent[call])
            if parent >= 0 && !isPoint(parent) && interval(of: main.start(parent).sinceStart.value) == index { continue }
            found[index].append((Int(main.function[call]), main.cost(call),
                                 main.start(call)))
        }
        for index in points.indices {
            let longest = found[index].sorted { $0.cost > $1.cost }.prefix(Timeline.callsPerInterval)
            points[index].calls = longest.sorted { $0.start < $1.start }
        }
    }

    private mutating func makePhases(profile: Profile, readyMark: String?, end: Instant?) {
        guard let mainEntered = profile.mainEntered else {
            notes.append("the trace does not say when main was entered: no phases")
            return
        }
        if profile.processStartKnown {
            phases.append(Phase(name: "T1", from: "process start", to: "main", duration: mainEntered.sinceStart))
        } else {
            notes.append("the trace does not say when the process started: T1 is unknown")
        }
        var t2End = end
        var t2Name = "end"
        if let readyMark {
            if let ready = profile.marks.first(where: { $0.name == readyMark }) {
                t2End = ready.at
                t2Name = "\"\(readyMark)\""
            } else {
                notes.append("no mark \"\(readyMark)\" in the trace: T2 runs to the end, and there is no T3")
            }
        }
        if let t2End { phases.append(Phase(name: "T2", from: "main", to: t2Name, duration: t2End - mainEntered)) }
        if let end, t2Name != "end", let t2End {
            phases.append(Phase(name: "T3", from: t2Name, to: "end", duration: end - t2End))
        }
    }

    /// The latest end of any recorded call, for a trace that does not say when the program ended.
    private static func lastInstant(_ profile: Profile) -> Instant? {
        var last: Int64?
        for thread in profile.threads {
            for call in 0..<thread.count {
                let end = thread.end(call, measured: profile.measured).sinceStart.value
                if last.map({ end > $0 }) ?? true { last = end }
            }
        }
        return last.map(Instant.init(nanoseconds:))
    }
}
