/// `spans --format json`: what the text view shows, as one document (times in ms; a call's and a
/// milestone's from its span's begin):
///
/// ```
/// {"runs":1,"spans":[{"name":"open document","count":4,"unfinished":1,"p50_ms":20.0,"p90_ms":40.0,
///  "p99_ms":40.0,"max_ms":40.0,"milestones":[{"name":"parsed","count":4,"p50_ms":10.0,"p90_ms":12.0}],
///  "slowest":[{"trace":"a.trace","extra":"path=a.txt","begin_ms":1250.33,"duration_ms":40.0,
///   "open_for_ms":null,"begin_tid":101,"end_tid":102,"milestones":[{"name":"parsed","offset_ms":10.0}],
///   "calls":[{"function":"layout_text","tid":101,"offset_ms":1.0,"cost_ms":30.0}],"dropped_frames":2,
///   "hangs":[{"offset_ms":20.0,"function":"decode_image","call_offset_ms":5.0}]}],
///  "unfinished_spans":[...the same, "duration_ms":null and "end_tid":null...]}]}
/// ```
/// A span that began and ended on one sampled thread also has `cpu_ms`, `preempted_ms`,
/// `blocked_ms` (`unknown_ms` when not zero) and `blocked_on`, as in `report`'s JSON.
public enum SpansJSONView: ProfileView {
    public static let command = ViewCommand.spans
    public static let format = "json"
    public static let summary = "span statistics and the slowest spans as one JSON document"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        let statistics = input.spanStatistics(limit: options.limit)
        output.writeJSONObject {
            output.write(static: "\"runs\":")
            output.writeInteger(statistics.runs)
            output.write(static: ",\"spans\":")
            output.writeJSONArray(statistics.rows) { write($0, to: output) }
        }
        output.write(byte: UInt8(ascii: "\n"))
    }

    private static func optional(_ time: Nanoseconds?, to output: ByteOutput) {
        if let time { output.writeMilliseconds(time) } else { output.write(static: "null") }
    }

    private static func write(_ row: SpanStatistics.Row, to output: ByteOutput) {
        output.writeJSONObject {
            output.write(static: "\"name\":")
            output.writeJSONString(row.name)
            output.write(static: ",\"count\":")
            output.writeInteger(row.count)
            output.write(static: ",\"unfinished\":")
            output.writeInteger(row.unfinished)
            output.write(static: ",\"p50_ms\":")
            optional(row.count == 0 ? nil : row.percentile(50), to: output)
            output.write(static: ",\"p90_ms\":")
            optional(row.count == 0 ? nil : row.percentile(90), to: output)
            output.write(static: ",\"p99_ms\":")
            optional(row.count == 0 ? nil : row.percentile(99), to: output)
            output.write(static: ",\"max_ms\":")
            optional(row.count == 0 ? nil : row.max, to: output)
            output.write(static: ",\"milestones\":")
            output.writeJSONArray(row.milestones) { milestone in
                output.writeJSONObject {
                    output.write(static: "\"name\":")
                    output.writeJSONString(milestone.name)
                    output.write(static: ",\"count\":")
                    output.writeInteger(milestone.offsets.count)
                    output.write(static: ",\"p50_ms\":")
                    output.writeMilliseconds(milestone.percentile(50))
                    output.write(static: ",\"p90_ms\":")
                    output.writeMilliseconds(milestone.percentile(90))
                }
            }
            output.write(static: ",\"slowest\":")
            output.writeJSONArray(row.worst) { write($0, to: output) }
            output.write(static: ",\"unfinished_spans\":")
            output.writeJSONArray(row.unfinishedInstances) { write($0, to: output) }
        }
    }

    private static func write(_ instance: SpanStatistics.Instance, to output: ByteOutput) {
        output.writeJSONObject {
            output.write(static: "\"trace\":")
            output.writeJSONString(instance.source)
            output.write(static: ",\"extra\":")
            output.writeJSONString(instance.extra)
            output.write(static: ",\"begin_ms\":")
            output.writeMilliseconds(instance.begin.sinceStart)
            output.write(static: ",\"duration_ms\":")
            optional(instance.duration, to: output)
            output.write(static: ",\"open_for_ms\":")
            optional(instance.openFor, to: output)
            output.write(static: ",\"begin_tid\":")
            output.writeInteger(instance.beginTid)
            output.write(static: ",\"end_tid\":")
            if let endTid = instance.endTid { output.writeInteger(endTid) } else { output.write(static: "null") }
            output.write(static: ",\"milestones\":")
            output.writeJSONArray(instance.milestones) { milestone in
                output.writeJSONObject {
                    output.write(static: "\"name\":")
                    output.writeJSONString(milestone.name)
                    output.write(static: ",\"offset_ms\":")
                    output.writeMilliseconds(milestone.offset)
                }
            }
            output.write(static: ",\"calls\":")
            output.writeJSONArray(instance.calls) { call in
                output.writeJSONObject {
                    output.write(static: "\"function\":")
                    output.writeJSONString(call.function)
                    output.write(static: ",\"tid\":")
                    output.writeInteger(call.tid)
                    output.write(static: ",\"offset_ms\":")
                    output.writeMilliseconds(call.start)
                    output.write(static: ",\"cost_ms\":")
                    output.writeMilliseconds(call.cost)
                }
            }
            output.write(static: ",\"dropped_frames\":")
            output.writeInteger(instance.droppedFrames)
            output.write(static: ",\"hangs\":")
            output.writeJSONArray(instance.hangs) { hang in
                output.writeJSONObject {
                    output.write(static: "\"offset_ms\":")
                    output.writeMilliseconds(hang.at)
                    output.write(static: ",\"function\":")
                    output.writeJSONString(hang.function)
                    output.write(static: ",\"call_offset_ms\":")
                    output.writeMilliseconds(hang.callStart)
                }
            }
            if let split = instance.split { output.writeTimeSplitMembers(split, milliseconds: true, preemptedWritten: false) }
        }
    }
}
