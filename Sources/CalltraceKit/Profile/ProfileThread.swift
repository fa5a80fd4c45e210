/// The recorded calls of one thread, as columns (one array per field, indexed by call), in the
/// order the calls ended, with the tree links: 40 bytes a call, so ten million calls fit in
/// 400 MB.
public struct ProfileThread: Sendable {
    public var tid: UInt64
    public var name: String
    public var isMain: Bool

    /// Index into `Profile.functions`.
    public internal(set) var function: [Int32] = []
    /// Nanoseconds since the profile's start: read as `start(_:)`.
    private var startColumn: [Int64] = []
    /// Nanoseconds: read as `cost(_:)`.
    private var costColumn: [Int64] = []
    /// The instrumentation overhead in the call's measured duration, nanoseconds (at most 4.29 s):
    /// taken out of its cost, except in a measured profile.
    public internal(set) var overhead: [UInt32] = []
    /// Depth on the thread's stack as recorded (0 = outermost) in the low 24 bits, `CallFlags` in
    /// the high 8.
    public internal(set) var depthAndFlags: [UInt32] = []
    /// Estimated time the thread waited for a CPU, for the calls flagged `.preempted`: those of
    /// `Preemption.markMinimum` or more that waited at all (the sampler's resolution is
    /// milliseconds, so shorter calls' shares mean nothing).
    public internal(set) var preemptedTime: [Int32: Int64] = [:]
    /// Where the cost went, for the calls flagged `.split`: those of a millisecond or more that a
    /// sample of their thread covers (docs/design.md, "Why a call was slow").
    public internal(set) var timeSplits: [Int32: TimeSplit] = [:]
    /// The thread's sampled time, state by state, in time order (empty when it was not sampled).
    public internal(set) var states: [ProfileThreadState] = []

    /// Top-level calls, by start time.
    public internal(set) var roots: [Int32] = []
    public internal(set) var firstChild: [Int32] = []
    public internal(set) var nextSibling: [Int32] = []
    public internal(set) var parent: [Int32] = []

    public init(tid: UInt64, name: String, isMain: Bool) {
        self.tid = tid
        self.name = name
        self.isMain = isMain
    }

    public var count: Int { function.count }

    /// When the call started.
    @inline(__always) public func start(_ call: Int) -> Instant { Instant(nanoseconds: startColumn[call]) }

    /// What the call cost: measured duration less the instrumentation overhead (or, in a profile
    /// built `measured`, the measured duration).
    @inline(__always) public func cost(_ call: Int) -> Nanoseconds { Nanoseconds(costColumn[call]) }

    /// Sets the calls' start and cost columns (nanoseconds), as the accumulator made them.
    mutating func setTimes(start: [Int64], cost: [Int64]) {
        startColumn = start
        costColumn = cost
    }

    /// The cost column as nanoseconds, for loops over every call.
    func withCosts<R>(_ body: (UnsafeBufferPointer<Int64>) throws -> R) rethrows -> R {
        try costColumn.withUnsafeBufferPointer(body)
    }

    public struct CallFlags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Still running when the trace ended (exit, crash).
        public static let unfinished = CallFlags(rawValue: 1)
        /// Left by a longjmp or an exception rather than by returning.
        public static let unwound = CallFlags(rawValue: 2)
        /// Has an entry in `preemptedTime`.
        public static let preempted = CallFlags(rawValue: 4)
        /// Has an entry in `timeSplits`.
        public static let split = CallFlags(rawValue: 8)
    }

    @inline(__always) public func depth(_ call: Int) -> UInt32 { depthAndFlags[call] & 0xFF_FFFF }
    @inline(__always) public func flags(_ call: Int) -> CallFlags { CallFlags(rawValue: UInt8(depthAndFlags[call] >> 24)) }

    /// Time the thread waited for a CPU during the call (zero for calls under a millisecond).
    @inline(__always) public func preempted(_ call: Int) -> Nanoseconds {
        guard depthAndFlags[call] & (UInt32(CallFlags.preempted.rawValue) << 24) != 0 else { return .zero }
        return Nanoseconds(min(preemptedTime[Int32(call)] ?? 0, costColumn[call]))
    }

    /// Where the call's cost went: on a CPU, preempted, blocked and in what; nil when not known
    /// (a call under a millisecond, a trace from before version 4, a kernel that hides the files).
    @inline(__always) public func split(_ call: Int) -> TimeSplit? {
        guard depthAndFlags[call] & (UInt32(CallFlags.split.rawValue) << 24) != 0 else { return nil }
        return timeSplits[Int32(call)]
    }

    /// The call's cost less its recorded children's (never below zero: a child's overhead
    /// estimate may exceed what its parent kept). Calls under the recording threshold were not
    /// recorded, so their time is in their parent's self time.
    public func selfTime(_ call: Int) -> Nanoseconds {
        var time = costColumn[call]
        var child = firstChild[call]
        while child >= 0 {
            time &-= costColumn[Int(child)]
            child = nextSibling[Int(child)]
        }
        return Nanoseconds(max(time, 0))
    }

    /// How far off the call's cost may be: half the overhead taken out of it. The hooks' real cost
    /// in the code around them is not the calibrated one (docs/design.md, "Overhead compensation":
    /// 0.7 to 2.1 times it on the bench's and the workloads), so a cost made mostly of
    /// taken-out overhead (a recursive function's, with millions of timed calls beneath it) is an
    /// estimate.
    @inline(__always) public func costUncertainty(_ call: Int) -> Nanoseconds { Nanoseconds(Int64(overhead[call] / 2)) }

    /// Is that uncertainty 15 % of the cost or more (and at least 10 us)? Never in a measured profile,
    /// whose overhead is not taken out.
    @inline(__always) public func costIsUncertain(_ call: Int, measured: Bool) -> Bool {
        let uncertainty = Int64(overhead[call] / 2)
        return !measured && uncertainty >= 10_000 && uncertainty * 100 >= costColumn[call] * 15
    }

    /// When the call ended: its start plus its measured duration.
    public func end(_ call: Int, measured: Bool) -> Instant {
        Instant(nanoseconds: startColumn[call] &+ costColumn[call] &+ (measured ? 0 : Int64(overhead[call])))
    }

    /// The call's children, by start time.
    public func children(of index: Int) -> [Int] {
        var result: [Int] = []
        var child = firstChild[index]
        while child >= 0 {
            result.append(Int(child))
            child = nextSibling[Int(child)]
        }
        return result
    }

    /// As `forEachPreOrder`, and `closing` each call with its self time (as `selfTime(_:)` has it)
    /// once its last descendant was visited: before its next sibling, children before parents.
    /// The self times come from a stack of the open calls' costs, so no call's children are
    /// walked twice.
    public func forEachPreOrder(_ body: (_ call: Int, _ treeDepth: Int) -> Void,
                                closing: (_ call: Int, _ selfTime: Nanoseconds) -> Void) {
        var remaining: [Int64] = []  // per tree depth: the open call's cost less its children's so far
        costColumn.withUnsafeBufferPointer { cost in
            firstChild.withUnsafeBufferPointer { firstChild in
                nextSibling.withUnsafeBufferPointer { nextSibling in
                    parent.withUnsafeBufferPointer { parent in
                        for root in roots {
                            var node = Int(root)
                            var depth = 0
                            while true {
                                body(node, depth)
                                let time = cost[node]
                                if depth > 0 { remaining[depth - 1] &-= time }
                                if depth == remaining.count { remaining.append(time) } else { remaining[depth] = time }
                                if firstChild[node] >= 0 {
                                    node = Int(firstChild[node])
                                    depth += 1
                                    continue
                                }
                                // Close it, and up until a node with a next sibling, or the root.
                                while true {
                                    closing(node, Nanoseconds(max(remaining[depth], 0)))
                                    if node == Int(root) || nextSibling[node] >= 0 { break }
                                    node = Int(parent[node])
                                    depth -= 1
                                }
                                if node == Int(root) { break }
                                node = Int(nextSibling[node])
                            }
                        }
                    }
                }
            }
        }
    }

    /// Visits every call in pre-order (a parent, then its children by start time) with its depth
    /// in the tree (roots are 0). It walks the links (down to the first child, on to the next
    /// sibling, up to the parent) with no stack, so deep trees cannot overflow it.
    public func forEachPreOrder(_ body: (_ call: Int, _ treeDepth: Int) -> Void) {
        firstChild.withUnsafeBufferPointer { firstChild in
            nextSibling.withUnsafeBufferPointer { nextSibling in
                parent.withUnsafeBufferPointer { parent in
                    for root in roots {
                        var node = root
                        var depth = 0
                        while true {
                            body(Int(node), depth)
                            if firstChild[Int(node)] >= 0 {
                                node = firstChild[Int(node)]
                                depth += 1
                                continue
                            }
                            // Up until a node with a next sibling, or the root.
                            while node != root && nextSibling[Int(node)] < 0 {
                                node = parent[Int(node)]
                                depth -= 1
                            }
                            if node == root { break }
                            node = nextSibling[Int(node)]
                        }
                    }
                }
            }
        }
    }
}
