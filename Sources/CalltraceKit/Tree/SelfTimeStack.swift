/// Self times of one thread's calls as they come in exit order, without the tree: the streaming
/// counterpart of `CallTreeBuilder`, whose rule it follows (a call adopts the pending calls that
/// started after it, deeper than it; what it adopts are its children, and its self time is its
/// cost less theirs).
///
/// Pending calls are kept as runs: consecutive pending calls at one depth, in start order, share
/// one entry holding their summed cost. A call adopts runs whole, so memory grows with the depth
/// of the stack, not with the number of calls (a loop in `main` making ten million calls leaves one
/// run pending, not ten million calls). What the builder decides call by call that a run cannot
/// say -- a call that would adopt only part of a run, or records it passes over at its own depth
/// (a signal handler's, a damaged trace's) -- clears `isExact`: the caller then builds the tree.
struct SelfTimeStack {
    private struct Run {
        var depth: UInt32
        var firstStart: Int64
        var lastStart: Int64
        /// The run's calls' summed cost, wrapping as `ProfileThread.selfTime` subtracts.
        var cost: Int64
    }

    private var runs: [Run] = []
    /// False once a call's children could not be told from runs.
    private(set) var isExact = true

    /// The self time of a call that ended now, after every call that ended before it on its thread.
    mutating func place(start: Int64, depth: UInt32, cost: Int64) -> Nanoseconds {
        var time = cost
        var low = runs.count
        while low > 0 {
            let run = runs[low - 1]
            guard run.lastStart >= start else { break }
            if run.firstStart < start || run.depth <= depth {
                isExact = false
                break
            }
            time &-= run.cost
            low -= 1
        }
        runs.removeLast(runs.count - low)
        if let last = runs.last, last.depth == depth, last.lastStart <= start {
            runs[runs.count - 1].lastStart = start
            runs[runs.count - 1].cost &+= cost
        } else {
            runs.append(Run(depth: depth, firstStart: start, lastStart: start, cost: cost))
        }
        return Nanoseconds(max(time, 0))
    }
}
