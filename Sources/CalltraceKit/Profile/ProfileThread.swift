/// The recorded calls of one thread, as columns (one array per field, indexed by call), in the
/// order the calls ended, with the tree links. About 53 bytes a call (61 when the trace sampled
/// preempted time): ten million calls fit in about half a gigabyte.
public struct ProfileThread: Sendable {
    public var tid: UInt64
    public var name: String
    public var isMain: Bool

    /// Index into `Profile.functions`.
    public internal(set) var function: [Int32] = []
    /// Nanoseconds since the profile's start (`Instant`).
    public internal(set) var start: [Int64] = []
    /// What the call cost: measured duration less the instrumentation overhead (or, in a profile
    /// built `measured`, the measured duration), nanoseconds.
    public internal(set) var total: [Int64] = []
    /// `total` less the totals of its recorded children (calls under the recording threshold were
    /// not recorded, so their time is in their parent's self time).
    public internal(set) var selfTime: [Int64] = []
    /// The instrumentation overhead in the call's measured duration: taken out of `total`, except
    /// in a measured profile.
    public internal(set) var overhead: [Int64] = []
    /// Depth on the thread's stack as recorded (0 = outermost).
    public internal(set) var depth: [UInt32] = []
    /// `CallFlags`.
    public internal(set) var flags: [UInt8] = []
    /// Estimated time the thread waited for a CPU during the call; empty when the trace has no
    /// run-delay samples (then every call's is zero).
    public internal(set) var preempted: [Int64] = []

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

    public struct CallFlags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Still running when the trace ended (exit, crash).
        public static let unfinished = CallFlags(rawValue: 1)
        /// Left by a longjmp or an exception rather than by returning.
        public static let unwound = CallFlags(rawValue: 2)
    }

    /// One call, gathered from the columns.
    public struct Call: Sendable {
        public var function: Int
        public var start: Instant
        public var total: Nanoseconds
        public var selfTime: Nanoseconds
        public var overhead: Nanoseconds
        public var preempted: Nanoseconds
        public var depth: UInt32
        public var flags: CallFlags
    }

    /// When the call ended: its start plus its measured duration.
    public func end(_ index: Int, measured: Bool) -> Instant {
        Instant(nanoseconds: start[index] &+ total[index] &+ (measured ? 0 : overhead[index]))
    }

    public func call(_ index: Int) -> Call {
        Call(function: Int(function[index]), start: Instant(nanoseconds: start[index]),
             total: Nanoseconds(total[index]), selfTime: Nanoseconds(selfTime[index]),
             overhead: Nanoseconds(overhead[index]), preempted: Nanoseconds(preempted.isEmpty ? 0 : preempted[index]),
             depth: depth[index], flags: CallFlags(rawValue: flags[index]))
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
