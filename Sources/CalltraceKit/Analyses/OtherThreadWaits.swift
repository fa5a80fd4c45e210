/// How long a thread's slow calls were blocked waiting on the program's other threads (a futex:
/// a lock, a condition, a join): `report`'s hint that, recorded with the main thread only, the work
/// it waited for is in no tree. A call counts when it is marked blocked (`TimeSplit.isBlockedMarked`)
/// and a futex is what it was blocked in most; only outermost such calls count, so no time counts
/// twice.
public enum OtherThreadWaits {
    /// `report`'s note for a trace of the main thread only (`tracesAllThreads` false) whose main
    /// thread's calls waited on the others; nil when they did not, or every thread was recorded.
    public static func hint(for profile: Profile, tracesAllThreads: Bool) -> String? {
        guard !tracesAllThreads, let main = profile.mainThread else { return nil }
        let time = blocked(in: main)
        guard time > .zero else { return nil }
        return "the main thread spent \(TextFormat.milliseconds(time)) ms of its calls blocked on other threads "
            + "(futex); their work is not in this tree: record with CALLTRACE_THREADS=all "
            + "(calltrace record --threads all) to see it"
    }

    /// The time `thread`'s calls spent blocked in a futex, zero when none did (or it was not sampled).
    public static func blocked(in thread: ProfileThread) -> Nanoseconds {
        var total = Nanoseconds.zero
        var pending = thread.roots
        while let next = pending.popLast() {
            let call = Int(next)
            if let split = thread.split(call), split.isBlockedMarked(cost: thread.cost(call)),
               let largest = split.blockedOn.first, isOtherThreads(largest.what) {
                total = total + split.blockedOn.filter { isOtherThreads($0.what) }.reduce(.zero) { $0 + $1.time }
            } else {
                pending += thread.children(of: call).map(Int32.init)
            }
        }
        return total
    }

    /// A futex of the program's (a lock, a condition, a join), not the tracer's own.
    private static func isOtherThreads(_ what: String) -> Bool {
        what.hasPrefix("futex") && !what.hasSuffix("(calltrace runtime)")
    }
}
