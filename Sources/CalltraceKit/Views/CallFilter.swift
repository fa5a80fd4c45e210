/// Which calls of a profile a view shows: those that cost at least `--threshold`, less those that
/// reached the threshold only by waiting for a CPU when `--hide-preempted` asks. `report`'s views
/// (tree, JSON lines, JSON) decide through it, so the tree and the JSON agree.
struct CallFilter {
    let minimum: Nanoseconds
    let hidePreempted: Bool
    /// Hiding compares with the higher of the recording threshold and the view's own.
    let threshold: Nanoseconds

    init(profile: Profile, options: ViewOptions) {
        self.init(recordedThreshold: profile.threshold, options: options)
    }

    init(recordedThreshold: Nanoseconds, options: ViewOptions) {
        minimum = options.minimumCost
        hidePreempted = options.hidePreempted
        threshold = max(recordedThreshold, options.minimumCost)
    }

    @inline(__always)
    func shows(_ thread: ProfileThread, _ call: Int) -> Bool {
        let total = thread.cost(call)
        guard total >= minimum else { return false }
        return !hidePreempted || shows(cost: total, preempted: thread.preempted(call))
    }

    /// A call of at least `minimum`, by its preempted time.
    @inline(__always)
    func shows(cost: Nanoseconds, preempted: @autoclosure () -> Nanoseconds) -> Bool {
        guard cost >= minimum else { return false }
        return !hidePreempted || !Preemption.crossedOnlyByPreemption(cost: cost, preempted: preempted(),
                                                                    threshold: threshold)
    }
}
