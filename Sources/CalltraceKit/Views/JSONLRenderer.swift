/// One JSON object per line per recorded call, thread by thread (main thread first), each
/// thread's calls in the order they ended:
///
/// ```
/// {"function":"parse_section","cost":12.110000,"overhead":0.004200,"time":1732241234.567890,"start":1732241234.555780,"depth":2,"thread":4242,"file":"conf.c","line":88}
/// ```
///
/// `cost` is in milliseconds: the measured duration less `overhead`, the instrumentation overhead
/// the runtime took out (with `report --raw`, `cost` is the measured duration); `time` (when the call ended) and `start` are unix seconds;
/// `file`/`line` appear when known; `unfinished`/`unwound` appear only when true; `preempted`
/// (milliseconds, `Preemption`'s estimate of the time the thread waited for a CPU during the call)
/// appears when it is not zero, whether or not the tree would mark the call.
public struct JSONLRenderer {
    public let trace: Trace
    public let symbolicator: Symbolicator
    /// Calls shorter than this are left out.
    public var minimumCost: Nanoseconds
    /// Show measured durations (hooks included) instead of costs (`report --raw`).
    public var measured: Bool
    /// Leave out calls that reached the threshold only because their thread waited for a CPU.
    public var hidePreempted = false
    public var preemption: Preemption

    public init(trace: Trace, symbolicator: Symbolicator, minimumCost: Nanoseconds = .zero, measured: Bool = false) {
        self.trace = trace
        self.symbolicator = symbolicator
        self.minimumCost = minimumCost
        self.measured = measured
        self.preemption = Preemption(trace: trace)
    }

    public func render(to output: inout some TextOutputStream) {
        let filter = PreemptionFilter(trace: trace, preemption: preemption, hide: hidePreempted,
                                      minimumCost: minimumCost, always: true)
        for thread in trace.threads {
            for record in trace.records(ofStream: thread.stream) {
                let cost = trace.clock.duration(ticks: record.ticks(measured: measured))
                guard cost >= minimumCost, let preempted = filter.preempted(record, cost: cost) else { continue }
                output.write(line(record, cost: cost, tid: thread.tid, preempted: preempted))
            }
        }
    }

    public func render() -> String {
        var text = ""
        render(to: &text)
        return text
    }

    func line(_ record: CallRecord, cost: Nanoseconds, tid: UInt64, preempted: Nanoseconds = .zero) -> String {
        let symbol = symbolicator.symbolicate(record.function, atTick: record.endTick)
        var fields = [
            ("function", JSONLRenderer.quoted(symbol.name)),
            ("cost", TextFormat.milliseconds(cost, decimals: 6)),
            ("overhead", TextFormat.milliseconds(trace.clock.duration(ticks: record.overheadTicks), decimals: 6)),
            ("time", TextFormat.seconds(trace.clock.unixTime(tick: record.endTick))),
            ("start", TextFormat.seconds(trace.clock.unixTime(tick: record.startTick))),
            ("depth", String(record.depth)),
            ("thread", String(tid)),
        ]
        if let file = symbol.file { fields.append(("file", JSONLRenderer.quoted(file))) }
        if let line = symbol.line { fields.append(("line", String(line))) }
        if record.isUnfinished { fields.append(("unfinished", "true")) }
        if record.isUnwound { fields.append(("unwound", "true")) }
        if preempted > .zero { fields.append(("preempted", TextFormat.milliseconds(preempted, decimals: 6))) }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n"
    }

    /// A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped.
    public static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
