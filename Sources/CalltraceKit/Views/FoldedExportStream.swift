/// `export --format folded` made while the trace is read (`ProfileBuilder.stream`), so that its
/// memory does not grow with the number of calls: each thread's calls go into a `StackForest` as
/// they come, which keeps one node per distinct path of the calls still open, and `write` then
/// writes the stacks as `FoldedExport` does, byte for byte.
///
/// A trace whose calls came in an order that cannot give the view's tree makes `finish` say so
/// (`ViewStream`).
public final class FoldedExportStream: ViewStream {
    private var lines = FoldedLines(showThreads: false)
    private var forests: [UInt32: Forest] = [:]
    private var current: Forest?
    private var currentStream: UInt32?
    private var ordered: [Forest] = []

    /// One stream's forest (a class: the dictionary is looked up only when the stream changes).
    private final class Forest {
        var stacks = StackForest()
        var tid: UInt64 = 0
        var name = ""
    }

    public init() {}

    public func begin(unixTimeAtStart: Nanoseconds, measured: Bool, threshold: Nanoseconds) {}

    public func add(_ function: ProfileFunction) { lines.add(function) }

    public func piece(stream: UInt32, tid: UInt64) {}

    public func add(_ call: ProfileCall, stream: UInt32) {
        if stream != currentStream {
            if forests[stream] == nil { forests[stream] = Forest() }
            current = forests[stream]
            currentStream = stream
        }
        current?.stacks.place(function: call.function, start: call.start, depth: call.depth, cost: call.cost)
    }

    /// Once the trace is read (`trace` says whose the calls were and in which order they were
    /// written): true when the stacks are the view's, false when the caller must render the view
    /// from a whole profile.
    public func finish(trace: Trace, profile: Profile) -> Bool {
        guard trace.cameInWrittenOrder else { return false }
        ordered = []
        var shown = 0
        for info in trace.threads {
            guard let forest = forests[info.stream] else { continue }
            guard forest.stacks.isExact else { return false }
            shown += 1
            if forest.stacks.calls > 0 {
                forest.tid = info.tid
                forest.name = info.name
                ordered.append(forest)
            }
        }
        // Calls of a stream no thread shows (never so far) would be lost.
        return shown == forests.count
    }

    /// Writes the stacks, thread by thread (after `finish` said true).
    public func write(trace: Trace, profile: Profile, options: ViewOptions, to output: ByteOutput) {
        lines.showThreads = ordered.count > 1
        for forest in ordered {
            lines.beginThread(tid: forest.tid, name: forest.name)
            forest.stacks.finish { frames, selfTime, firstStart in
                lines.add(frames: frames, selfTime: selfTime, firstStart: firstStart)
            }
            lines.write(to: output)
        }
        ordered = []
    }
}
