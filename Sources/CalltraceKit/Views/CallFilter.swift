/// Which calls of a profile a view shows: those that cost at least `--threshold`, less those that
/// reached the threshold only by waiting for a CPU when `--hide-preempted` asks. `report`'s views
/// (tree, JSON lines, JSON) decide through it, so the tree and the JSON agree.
struct CallFilter {
    let minimum: Nanoseconds
    let hidePreempted: Bool
    /// Hiding compares with the higher of the recording threshold and the view's own.
    let threshold: Nanoseconds

    init(profile: Profile, options: ViewOptions) {
        minimum = options.minimumCost
        hidePreempted = options.hidePreempted
        threshold = max(profile.threshold, options.minimumCost)
    }

    @inline(__always)
    func shows(_ thread: ProfileThread, _ call: Int) -> Bool {
        let total = thread.cost(call).value
        guard total >= minimum.value else { return false }
        if hidePreempted {
            return !Preemption.crossedOnlyByPreemption(cost: Nanoseconds(total), preempted: thread.preempted(call),
                                                        threshold: threshold)
        }
        return true
    }
}
