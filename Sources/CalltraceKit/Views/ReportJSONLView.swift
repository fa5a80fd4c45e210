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
/// thread waited for a CPU during the call) appears when it is not zero.
public enum ReportJSONLView: ProfileView {
    public static let command = ViewCommand.report
    public static let format = "jsonl"
    public static let summary = "one JSON object per call"
    public static let needsLines = true

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        // Each function's `"function":...` and file/line fields, made once.
        let functionFields: [[UInt8]] = profile.functions.map { function in
            var fields: [UInt8] = []
            let scratch = ByteOutput { fields.append(contentsOf: $0) }
            scratch.write("{\"function\":")
            scratch.writeJSONString(function.name)
            scratch.flush()
            return fields
        }
        let locationFields: [[UInt8]] = profile.functions.map { function in
            var fields: [UInt8] = []
            let scratch = ByteOutput { fields.append(contentsOf: $0) }
            if let file = function.file {
                scratch.write(",\"file\":")
                scratch.writeJSONString(file)
            }
            if let line = function.line { scratch.write(",\"line\":\(line)") }
            scratch.flush()
            return fields
        }
        for thread in profile.threads {
            let filter = CallFilter(profile: profile, options: options)
            let tid = Array(",\"thread\":\(thread.tid)".utf8)
            for call in 0..<thread.count where filter.shows(thread, call) {
                let function = Int(thread.function[call])
                let start = Nanoseconds(thread.start[call])
                output.write(functionFields[function])
                output.write(",\"cost\":")
                output.writeMilliseconds(Nanoseconds(thread.total[call]))
                output.write(",\"overhead\":")
                output.writeMilliseconds(Nanoseconds(thread.overhead[call]))
                output.write(",\"self\":")
                output.writeMilliseconds(Nanoseconds(thread.selfTime[call]))
                output.write(",\"time\":")
                output.writeSeconds(profile.unixTime(thread.end(call, measured: profile.measured)))
                output.write(",\"start\":")
                output.writeSeconds(profile.unixTimeAtStart + start)
                output.write(",\"depth\":")
                output.write(UInt64(thread.depth[call]), width: 0)
                output.write(tid)
                output.write(locationFields[function])
                let flags = ProfileThread.CallFlags(rawValue: thread.flags[call])
                if flags.contains(.unfinished) { output.write(",\"unfinished\":true") }
                if flags.contains(.unwound) { output.write(",\"unwound\":true") }
                let preempted = CallFilter.preempted(thread, call)
                if preempted > .zero {
                    output.write(",\"preempted\":")
                    output.writeMilliseconds(preempted)
                }
                output.write("}\n")
            }
        }
    }
}
