/// Self times of one thread's calls as they come in exit order, without the tree: the streaming
/// counterpart of `CallTreeBuilder`, over `PendingRuns` (a call's self time is its cost less the
/// summed cost of the runs it adopts). What runs cannot say clears `isExact`: the caller then
/// builds the tree.
struct SelfTimeStack {
    private var pending = PendingRuns<Void>()
    /// False once a call's children could not be told from runs.
    var isExact: Bool { pending.isExact }

    /// The self time of a call that ended now, after every call that ended before it on its thread.
    mutating func place(start: Int64, depth: UInt32, cost: Int64) -> Nanoseconds {
        let low = pending.adopting(start: start, depth: depth)
        let time = cost &- pending.cost(from: low)
        pending.place(from: low, start: start, depth: depth, cost: cost, newRun: ())
        return Nanoseconds(max(time, 0))
    }
}
