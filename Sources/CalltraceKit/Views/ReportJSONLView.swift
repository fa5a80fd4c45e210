/// `report --format jsonl`: one JSON object per line per call, thread by thread (main thread
/// first), each thread's calls in the order they ended:
///
/// ```
/// {"function":"parse_section","cost":12.110000,"overhead":0.004200,"self":3.200000,"time":1732241234.567890,"start":1732241234.555780,"depth":2,"thread":4242,"file":"conf.c","line":88}
/// ```
///
/// `cost` and `self` are in milliseconds: the measured duration less `overhead`, the instrumentation
/// overhead the runtime took out (with `report --raw`, `cost` is the measured duration); `time`
/// (when the call ended) and `start` are unix seconds; `file`/`line` appear when known;
/// `unfinished`/`unwound` appear only when true; `preempted` (milliseconds, the estimated time the
/// thread waited for a CPU during the call) appears when it is not zero, for calls of a
/// millisecond or more (the run-delay sampler's resolution).
public enum ReportJSONLView: ProfileView {
    public static let command = ViewCommand.report
    public static let format = "jsonl"
    public static let summary = "one JSON object per call"
    public static let needsLines = true

    public static func stream(options: ViewOptions) -> (any ViewStream)? { ReportJSONLStream(options: options) }

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        // Each function's `"function":...` and file/line fields, made once.
        let functionFields = NameArena(profile.functions.map(ReportJSONLLine.functionField))
        let locationFields = NameArena(profile.functions.map(ReportJSONLLine.locationField))
        var seconds = SecondsFormatter()
        let filter = CallFilter(profile: profile, options: options)
        for thread in profile.threads {
            let tid = ReportJSONLLine.threadField(thread.tid)
            for call in 0..<thread.count where filter.shows(thread, call) {
                let function = Int(thread.function[call])
                ReportJSONLLine.write(
                    function: functionFields[function], location: locationFields[function], cost: thread.cost(call),
                    overhead: Nanoseconds(Int64(thread.overhead[call])), selfTime: thread.selfTime(call),
                    end: profile.unixTime(thread.end(call, measured: profile.measured)),
                    start: profile.unixTimeAtStart + thread.start(call).sinceStart, depth: thread.depth(call),
                    tid: tid, flags: thread.flags(call), preempted: thread.preempted(call), split: thread.split(call),
                    seconds: &seconds, to: output)
            }
        }
    }
}

/// One line of `report --format jsonl`, as the view and `ReportJSONLStream` write it.
enum ReportJSONLLine {
    static func functionField(_ function: ProfileFunction) -> String {
        ByteOutput.text { scratch in
            scratch.write("{\"function\":")
            scratch.writeJSONString(function.name)
        }
    }

    static func locationField(_ function: ProfileFunction) -> String {
        ByteOutput.text { scratch in
            if let file = function.file {
                scratch.write(",\"file\":")
                scratch.writeJSONString(file)
            }
            if let line = function.line { scratch.write(",\"line\":\(line)") }
        }
    }

    static func threadField(_ tid: UInt64) -> [UInt8] { Array(",\"thread\":\(tid)".utf8) }

    /// `end` and `start` are unix times.
    @inline(__always)
    static func write(function: UnsafeBufferPointer<UInt8>, location: UnsafeBufferPointer<UInt8>, cost: Nanoseconds,
                      overhead: Nanoseconds, selfTime: Nanoseconds, end: Nanoseconds, start: Nanoseconds,
                      depth: UInt32, tid: [UInt8], flags: ProfileThread.CallFlags, preempted: Nanoseconds,
                      split: TimeSplit?, seconds: inout SecondsFormatter, to output: ByteOutput) {
        output.write(function)
        output.write(static: ",\"cost\":")
        output.writeMilliseconds(cost)
        output.write(static: ",\"overhead\":")
        output.writeMilliseconds(overhead)
        output.write(static: ",\"self\":")
        output.writeMilliseconds(selfTime)
        output.write(static: ",\"time\":")
        seconds.write(end, to: output)
        output.write(static: ",\"start\":")
        seconds.write(start, to: output)
        output.write(static: ",\"depth\":")
        output.write(UInt64(depth), width: 0)
        output.write(tid)
        output.write(location)
        if flags.contains(.unfinished) { output.write(static: ",\"unfinished\":true") }
        if flags.contains(.unwound) { output.write(static: ",\"unwound\":true") }
        if preempted > .zero {
            output.write(static: ",\"preempted\":")
            output.writeMilliseconds(preempted)
        }
        if let split { output.writeTimeSplitMembers(split, milliseconds: false, preemptedWritten: preempted > .zero) }
        output.write(static: "}\n")
    }
}

/// Unix times as seconds with six decimals, the whole seconds formatted once per second: calls
/// come thousands a second, and formatting 17 digits twice per line was a fifth of the view's time.
struct SecondsFormatter {
    private var second: UInt64 = .max
    private var digits: [UInt8] = []

    mutating func write(_ time: Nanoseconds, to output: ByteOutput) {
        let micros = (UInt64(max(time.value, 0)) + 500) / 1000
        let (whole, fraction) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        if whole != second {
            second = whole
            digits = Array(String(whole).utf8) + [UInt8(ascii: ".")]
        }
        output.write(digits)
        output.write(fixed: fraction + 1_000_000, decimals: 0, width: 0, droppingFirst: true)
    }
}
