/// One thread's pending calls as they come in exit order, kept as runs: `CallTreeBuilder`'s rule
/// (a call adopts the pending calls that started after it, deeper than it; what it adopts are its
/// children) for the views that stream instead of building the tree (`SelfTimeStack`,
/// `StackForest`, `OTLPExportStream`), each keeping its own `Payload` per run.
///
/// A run is consecutive pending calls at one depth, in start order, with their summed cost. A call
/// adopts runs whole, so memory grows with the depth of the stack, not with the number of calls (a
/// loop in `main` making ten million calls leaves one run pending, not ten million calls). What the
/// builder decides call by call that a run cannot say -- a call that would adopt only part of a
/// run, or records it passes over at its own depth (a signal handler's, a damaged trace's) --
/// clears `isExact`: the caller then builds the tree. Records it passes over that began and ended
/// on the tick it began (a counter coarser than the calls) are the exception: they stay pending
/// before it, as runs can say.
///
/// A call is placed in two steps, so that the caller can read what it adopts in between:
/// `adopting` says which runs it adopts (`runs[low...]`), then `place` removes them and puts the
/// call in the run at its depth, joining the last one or starting a new one.
struct PendingRuns<Payload> {
    struct Run {
        var depth: UInt32
        var firstStart: Int64
        var lastStart: Int64
        /// The run's calls' summed cost, wrapping as `ProfileThread.selfTime` subtracts.
        var cost: Int64
        var payload: Payload
    }

    /// Oldest first; the pending calls are in start order across them.
    private(set) var runs: [Run] = []
    /// False once a call's children could not be told from runs.
    private(set) var isExact = true

    /// Where the runs that a call that started at `start`, at `depth`, adopts begin: its children
    /// are the calls of `runs[low...]`.
    mutating func adopting(start: Int64, depth: UInt32) -> Int {
        var low = runs.count
        while low > 0 {
            let run = runs[low - 1]
            guard run.lastStart >= start else { break }
            // Calls at this depth or shallower that began and ended on the tick this one began (a
            // counter coarser than the calls): the builder passes over them, and over any below
            // them that began on that tick (none deeper than they are: each would have been
            // adopted), so they stay pending before this call, which joins their run at its depth.
            if run.lastStart == start && run.depth <= depth { break }
            if run.firstStart < start || run.depth <= depth {
                isExact = false
                break
            }
            low -= 1
        }
        return low
    }

    /// The summed cost of `runs[low...]`, wrapping.
    func cost(from low: Int) -> Int64 {
        var sum: Int64 = 0
        for run in runs[low...] { sum &+= run.cost }
        return sum
    }

    /// Removes `runs[low...]` (the call's children) and puts the call in the last run, when that is
    /// at its depth and started no later, else in a new run carrying `payload`. True when it
    /// joined the last run.
    @discardableResult
    mutating func place(from low: Int, start: Int64, depth: UInt32, cost: Int64, newRun payload: Payload) -> Bool {
        runs.removeLast(runs.count - low)
        if let last = runs.last, last.depth == depth, last.lastStart <= start {
            runs[runs.count - 1].lastStart = start
            runs[runs.count - 1].cost &+= cost
            return true
        }
        runs.append(Run(depth: depth, firstStart: start, lastStart: start, cost: cost, payload: payload))
        return false
    }

    /// Changes the last run's payload (the run the last call placed is in).
    mutating func updateLast(_ body: (inout Payload) -> Void) {
        body(&runs[runs.count - 1].payload)
    }

    /// Takes the runs pending at the end (the roots), leaving none.
    mutating func removeAll() -> [Run] {
        defer { runs.removeAll() }
        return runs
    }
}
