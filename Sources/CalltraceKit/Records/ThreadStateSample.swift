/// A THREAD_STATE record: one sample of a recording thread's scheduler statistics, taken at `tick`:
/// its time on a CPU and its run delay so far (both cumulative, from
/// `/proc/self/task/TID/schedstat`), and what it was doing at that moment (docs/design.md, "Why a
/// call was slow"). `ThreadTime` spreads the growth between two samples over the calls they span.
public struct ThreadStateSample: Equatable, Sendable {
    public var stream: UInt32
    public var tid: UInt64
    public var tick: Ticks
    /// Time on a CPU since the thread started.
    public var cpu: Nanoseconds
    /// Time runnable but waiting for a CPU since the thread started.
    public var runDelay: Nanoseconds
    public var state: State

    public enum State: Equatable, Sendable {
        /// On a CPU or runnable.
        case running
        /// Blocked in system call `number` (`name`, as the runtime knows it, or "syscall N"), whose
        /// first argument was `argument`; `target` is what a descriptor argument referred to (a
        /// path, "pipe:[N]", "socket:[N]"), "" when none.
        case syscall(number: UInt64, name: String, argument: UInt64, target: String)
        /// Blocked outside a system call (a page fault waiting for I/O): the kernel function it
        /// waited in (`wchan`), "" when unknown.
        case kernel(wchan: String)
        /// Not running throughout, and what it was blocked in could not be read.
        case unknown

        public var isBlocked: Bool {
            if case .running = self { return false }
            return true
        }
    }

    /// Decodes a THREAD_STATE record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let (stream, tid, tick, cpu, delay, kind) = try body.read(UInt64.self, UInt64.self, Ticks.self, UInt64.self,
                                                                   UInt64.self, UInt64.self)
        guard let stream32 = UInt32(exactly: stream), !TraceFormat.isRuntimeStream(stream32) else {
            throw RecordError.badStream(stream)
        }
        let state: State
        switch kind {
        case TraceFormat.ThreadState.running: state = .running
        case TraceFormat.ThreadState.syscall:
            let (number, name, argument, target) = try body.read(UInt64.self, String.self, UInt64.self, String.self)
            state = .syscall(number: number, name: name, argument: argument, target: target)
        case TraceFormat.ThreadState.kernel: state = .kernel(wchan: try body.readString())
        default: state = .unknown
        }
        self.init(stream: stream32, tid: tid, tick: tick, cpu: Nanoseconds(Int64(clamping: cpu)),
                  runDelay: Nanoseconds(Int64(clamping: delay)), state: state)
    }

    public init(stream: UInt32, tid: UInt64, tick: Ticks, cpu: Nanoseconds, runDelay: Nanoseconds, state: State) {
        self.stream = stream
        self.tid = tid
        self.tick = tick
        self.cpu = cpu
        self.runDelay = runDelay
        self.state = state
    }
}
