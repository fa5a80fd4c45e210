/// `spans` (default): one row per span name over every run given (`SpanStatistics`), then each
/// name's milestones and its slowest spans with what happened inside them, and its unfinished
/// ones. Times are milliseconds; percentiles by nearest rank over the spans that ended.
///
/// ```
/// spans in 1 run: 2 names, 5 ended, 1 unfinished; times in ms
///    count  unfinished        p50        p90        p99        max  span
///        4           1      20.00      40.00      40.00      40.00  open document
///        1           0       5.00       5.00       5.00       5.00  request
///
/// open document: milestones, from the span's begin
///         p50        p90  spans  milestone
///       10.00      12.00      4  parsed
/// open document: the 1 slowest
///   40.00 ms  begun at 1250.33 ms on thread 101, ended on thread 102  "path=a.txt"  (a.trace)
///     milestones: parsed +10.00 ms
///     calls:       30.00 ms  at +1.00 ms  layout_text  (thread 101)
///     dropped frames: 2
///     hang:        at +20.00 ms  in decode_image, since +5.00 ms
///     time: on a CPU 12.00 ms, preempted 0.00 ms, blocked 28.00 ms (read pipe)
/// open document: 1 unfinished, not in the percentiles
///   begun at 3000.00 ms on thread 101, open for 500.00 ms when the trace ended
/// ```
/// `time:` is there for a span that began and ended on one sampled thread (`ThreadTime`): its time
/// on a CPU, preempted and blocked, with what it was blocked in (`TimeSplit.blockedSummary`).
public enum SpansTextView: ProfileView {
    public static let command = ViewCommand.spans
    public static let format = "text"
    public static let summary = "span durations by name, milestones, and the slowest spans with their calls"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        let statistics = input.spanStatistics(limit: options.limit)
        let runs = "\(statistics.runs) run\(statistics.runs == 1 ? "" : "s")"
        guard !statistics.rows.isEmpty else {
            output.write("no spans in \(runs): the program never called calltrace_span_begin() (see calltrace.h)\n")
            return
        }
        let ended = statistics.rows.reduce(0) { $0 + $1.count }
        let unfinished = statistics.rows.reduce(0) { $0 + $1.unfinished }
        let names = statistics.rows.count
        output.write("spans in \(runs): \(names) name\(names == 1 ? "" : "s"), \(ended) ended, \(unfinished) unfinished; times in ms\n")
        var heading = TextFormat.padded("count", width: 8) + TextFormat.padded("unfinished", width: 12)
        for title in ["p50", "p90", "p99", "max"] { heading += TextFormat.padded(title, width: 11) }
        output.write(heading + "  span\n")
        for row in statistics.rows {
            var line = TextFormat.padded(String(row.count), width: 8) + TextFormat.padded(String(row.unfinished), width: 12)
            for time in [row.percentile(50), row.percentile(90), row.percentile(99), row.max] {
                line += TextFormat.padded(row.count == 0 ? "-" : TextFormat.milliseconds(time), width: 11)
            }
            output.write(line + "  " + row.name + "\n")
        }
        for row in statistics.rows {
            output.write("\n")
            if !row.milestones.isEmpty {
                output.write("\(row.name): milestones, from the span's begin\n")
                output.write(TextFormat.padded("p50", width: 11) + TextFormat.padded("p90", width: 11)
                             + TextFormat.padded("spans", width: 7) + "  milestone\n")
                for milestone in row.milestones {
                    output.write(TextFormat.padded(TextFormat.milliseconds(milestone.percentile(50)), width: 11)
                                 + TextFormat.padded(TextFormat.milliseconds(milestone.percentile(90)), width: 11)
                                 + TextFormat.padded(String(milestone.offsets.count), width: 7) + "  " + milestone.name + "\n")
                }
            }
            if !row.worst.isEmpty {
                output.write("\(row.name): the \(row.worst.count) slowest\n")
                for instance in row.worst { write(instance, to: output) }
            }
            if row.unfinished > 0 {
                output.write("\(row.name): \(row.unfinished) unfinished, not in the percentiles\n")
                for instance in row.unfinishedInstances { write(instance, to: output) }
                if row.unfinishedInstances.count < row.unfinished {
                    output.write("  (\(row.unfinished - row.unfinishedInstances.count) more)\n")
                }
            }
        }
    }

    private static func write(_ instance: SpanStatistics.Instance, to output: ByteOutput) {
        var line = "  "
        if let duration = instance.duration { line += ms(duration) + "  " }
        line += "begun at \(ms(instance.begin.sinceStart)) on thread \(instance.beginTid)"
        if let endTid = instance.endTid {
            line += endTid == instance.beginTid ? ", ended there" : ", ended on thread \(endTid)"
        } else if let openFor = instance.openFor {
            line += ", open for \(ms(openFor)) when the trace ended"
        } else {
            line += ", still open when the trace was read"
        }
        if !instance.extra.isEmpty { line += "  \"\(instance.extra)\"" }
        if !instance.source.isEmpty { line += "  (\(instance.source))" }
        output.write(line + "\n")
        if !instance.milestones.isEmpty {
            output.write("    milestones: " + instance.milestones.map { "\($0.name) +\(ms($0.offset))" }.joined(separator: ", ") + "\n")
        }
        for (index, call) in instance.calls.enumerated() {
            output.write((index == 0 ? "    calls:  " : "            ") + TextFormat.padded(ms(call.cost), width: 11)
                         + "  at +\(ms(call.start))  \(call.function)  (thread \(call.tid))\n")
        }
        if instance.droppedFrames > 0 { output.write("    dropped frames: \(instance.droppedFrames)\n") }
        for hang in instance.hangs {
            output.write("    hang at +\(ms(hang.at)) in \(hang.function), since +\(ms(hang.callStart))\n")
        }
        if let split = instance.split {
            output.write("    time: on a CPU \(ms(split.cpu)), preempted \(ms(split.preempted)), blocked \(ms(split.blocked))"
                         + (split.blocked > .zero ? " (\(split.blockedSummary))" : "")
                         + (split.unknown > .zero ? ", unknown \(ms(split.unknown))" : "") + "\n")
        }
    }

    private static func ms(_ time: Nanoseconds) -> String { TextFormat.milliseconds(time) + " ms" }
}
