import Glibc

/// `report --format jsonl` written while the trace is read (`ProfileBuilder.stream`), so that its
/// memory does not grow with the number of calls: each call's line is made as the call comes,
/// its self time from the calls that ended before it (`SelfTimeStack`), and put aside per thread
/// in an unlinked temporary file (`SpoolFile`); `write` then copies the lines out thread by
/// thread, in the order `ReportJSONLView` writes them, byte for byte.
///
/// A trace whose calls came in an order that cannot give the view's self times or threads makes
/// `finish` say so (`ViewStream`).
public final class ReportJSONLStream: ViewStream {
    private let options: ViewOptions
    private var filter = CallFilter(recordedThreshold: .zero, options: ViewOptions())
    private var unixTimeAtStart = Nanoseconds.zero
    private var measured = false
    private let spool: SpoolFile
    private var threads: [UInt32: ThreadLines] = [:]
    /// Each stream's thread as its first piece named it.
    private var firstTid: [UInt32: UInt64] = [:]
    private var current: ThreadLines?
    private var currentStream: UInt32?
    /// Each function's `{"function":...` and file/line fields, in one growing buffer.
    private var fieldBytes: [UInt8] = []
    private var functionSpans: [Range<Int>] = []
    private var locationSpans: [Range<Int>] = []
    /// Did any call cost at least `options.minimumCost` (shown or hidden as preempted)?
    public private(set) var anyReachedMinimum = false

    /// One thread's lines so far.
    private final class ThreadLines {
        let tid: UInt64
        let tidField: [UInt8]
        var selfTimes = SelfTimeStack()
        var seconds = SecondsFormatter()
        var chunks: [Range<Int>] = []
        var output: ByteOutput?

        init(tid: UInt64, spool: SpoolFile) {
            self.tid = tid
            tidField = ReportJSONLLine.threadField(tid)
            output = ByteOutput { [unowned self] bytes in self.chunks.append(spool.append(bytes)) }
        }
    }

    /// Nil when no temporary file can be made: render `ReportJSONLView` from a profile instead.
    public init?(options: ViewOptions) {
        guard let spool = SpoolFile() else { return nil }
        self.spool = spool
        self.options = options
    }

    public func begin(unixTimeAtStart: Nanoseconds, measured: Bool, threshold: Nanoseconds) {
        self.unixTimeAtStart = unixTimeAtStart
        self.measured = measured
        filter = CallFilter(recordedThreshold: threshold, options: options)
    }

    public func add(_ function: ProfileFunction) {
        let name = Array(ReportJSONLLine.functionField(function).utf8)
        functionSpans.append(fieldBytes.count..<(fieldBytes.count + name.count))
        fieldBytes += name
        let location = Array(ReportJSONLLine.locationField(function).utf8)
        locationSpans.append(fieldBytes.count..<(fieldBytes.count + location.count))
        fieldBytes += location
    }

    public func piece(stream: UInt32, tid: UInt64) {
        if firstTid[stream] == nil { firstTid[stream] = tid }
    }

    public func add(_ call: ProfileCall, stream: UInt32) {
        if stream != currentStream {
            // A thread's lines (and their buffer) are made at its first call.
            if threads[stream] == nil { threads[stream] = ThreadLines(tid: firstTid[stream] ?? 0, spool: spool) }
            current = threads[stream]
            currentStream = stream
        }
        guard let thread = current, let output = thread.output else { return }
        let cost = Nanoseconds(call.cost)
        let selfTime = thread.selfTimes.place(start: call.start, depth: call.depth, cost: call.cost)
        let flags = call.flags
        let preempted = flags.contains(.preempted) ? call.preemptedTime : .zero
        if cost >= options.minimumCost { anyReachedMinimum = true }
        guard filter.shows(cost: cost, preempted: preempted) else { return }
        let function = Int(call.function)
        let end = call.start &+ call.cost &+ (measured ? 0 : Int64(call.overhead))
        fieldBytes.withUnsafeBufferPointer { fields in
            ReportJSONLLine.write(
                function: UnsafeBufferPointer(rebasing: fields[functionSpans[function]]),
                location: UnsafeBufferPointer(rebasing: fields[locationSpans[function]]), cost: cost,
                overhead: Nanoseconds(Int64(call.overhead)), selfTime: selfTime,
                end: unixTimeAtStart + Nanoseconds(end), start: unixTimeAtStart + Nanoseconds(call.start),
                depth: call.depth, tid: thread.tidField, flags: flags, preempted: preempted, split: call.split,
                seconds: &thread.seconds, to: output)
        }
    }

    /// Once the trace is read (`trace` says whose the calls were and in which order they were
    /// written): true when the lines are the view's, false when they cannot be (see above) or the
    /// temporary file could not be written.
    public func finish(trace: Trace, profile: Profile) -> Bool {
        for thread in threads.values {
            thread.output?.flush()
            thread.output = nil
        }
        guard spool.failure == 0, trace.cameInWrittenOrder else { return false }
        var shown = 0
        for info in trace.threads {
            guard let thread = threads[info.stream] else { continue }
            guard thread.tid == info.tid, thread.selfTimes.isExact else { return false }
            shown += 1
        }
        // Calls of a stream no thread shows (never so far) would be lost.
        return shown == threads.count
    }

    /// Writes the lines thread by thread, as `ReportJSONLView` orders them (after `finish` said
    /// true); throws when the temporary file cannot be read back.
    public func write(trace: Trace, profile: Profile, options: ViewOptions, to output: ByteOutput) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
        defer { buffer.deallocate() }
        for info in trace.threads {
            for chunk in threads[info.stream]?.chunks ?? [] {
                spool.read(chunk, buffer: buffer) { output.pass($0) }
            }
        }
        if spool.failure != 0 {
            throw SpoolFailure(errno: spool.failure)
        }
    }
}

/// The temporary file of a streamed view could not be read back.
public struct SpoolFailure: Error, CustomStringConvertible {
    public let errno: Int32
    public var description: String { "cannot read back the temporary file: \(String(cString: strerror(errno)))" }
}
