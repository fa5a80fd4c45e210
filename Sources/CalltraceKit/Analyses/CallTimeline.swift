/// Calls placed on a timeline for the exports that draw one (Chrome, speedscope): each call from
/// its start to its start plus its measured duration (wall time, hooks included: the time the
/// program really spent), clamped inside its parent so that nesting holds even where a trace's
/// times do not (a signal handler's records, an unwound frame). The call's cost, overhead taken
/// out, goes with it as data.
struct CallTimeline {
    /// Visits every call of `thread` in pre-order with its start and end (nanoseconds since the
    /// profile's start), and `close` for each call once its children have been visited, in
    /// order of time.
    static func walk(_ thread: ProfileThread, measured: Bool,
                     open: (_ call: Int, _ start: Int64, _ end: Int64) -> Void,
                     close: (_ call: Int, _ end: Int64) -> Void) {
        // The open calls: (tree depth, call, end); `now`, the last time handed out, so that times
        // never go back (a call that began before its previous sibling ended starts at that end).
        var stack: [(depth: Int, call: Int, end: Int64)] = []
        var now = Int64.min
        thread.forEachPreOrder { call, treeDepth in
            while let last = stack.last, last.depth >= treeDepth {
                stack.removeLast()
                close(last.call, last.end)
                now = max(now, last.end)
            }
            let limit = stack.last?.end ?? Int64.max
            let start = min(max(thread.start(call).sinceStart.value, now), limit)
            let end = min(max(thread.end(call, measured: measured).sinceStart.value, start), limit)
            open(call, start, end)
            now = start
            stack.append((treeDepth, call, end))
        }
        while let last = stack.popLast() { close(last.call, last.end) }
    }
}
