/// `export --format chrome`: Chrome's Trace Event JSON, for chrome://tracing, Perfetto's UI and
/// older tools. Each call is an `X` (complete) event with `ts`/`dur` in microseconds since the
/// process started, placed at its measured wall time (`CallTimeline`), its cost with the hooks'
/// overhead taken out in `args` (with `cpu_ms`, `preempted_ms`, `blocked_ms` and, when it was
/// blocked, `blocked_on` such as "read pipe 30.00 ms, futex 8.00 ms", when its thread was sampled); process and thread names as `M` metadata events; marks as
/// instant events on their thread; frames as instant events on a "frames" track of their
/// thread; each hang as an instant event on the main thread with its native stack in `args`;
/// each span (`calltrace_span_begin`) as a nestable async pair, `b` on the thread it began on and
/// `e` on the one it ended on, category `span` and an id of its own (`0x1` for the profile's first
/// span), its extra text and threads in `args`, and each milestone an `n` event with the same id
/// on the thread that gave it. A span still open when the trace ended ends there, `unfinished` in
/// its `e` event's `args` (and has no `e` when the trace does not say when it ended).
///
/// ```
/// {"displayTimeUnit":"ms","traceEvents":[
/// {"name":"process_name","ph":"M","pid":4242,"tid":4242,"args":{"name":"app"}},
/// {"name":"main","cat":"call","ph":"X","pid":4242,"tid":4242,"ts":5310.000,"dur":121400.000,"args":{"cost_ms":121.4}},
/// {"name":"ready","cat":"mark","ph":"i","s":"t","pid":4242,"tid":4242,"ts":45000.000}]}
/// ```
public enum ChromeExport: ProfileView {
    public static let command = ViewCommand.export
    public static let format = "chrome"
    public static let summary = "Chrome Trace Event JSON (chrome://tracing)"
    public static let needsLines = true

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let pid = profile.pid
        var first = true
        func begin() {
            output.write(static: first ? "\n" : ",\n")
            first = false
        }
        var nesting = JSONNesting()
        nesting.open(.object, in: output)
        output.write(static: "\"displayTimeUnit\":\"ms\",\"otherData\":")
        nesting.open(.object, in: output)
        output.write(static: "\"program\":")
        output.writeJSONString(profile.program)
        nesting.close(in: output)
        output.write(static: ",\"traceEvents\":")
        nesting.open(.array, in: output)
        begin()
        metadata("process_name", pid: pid, tid: pid, value: profile.programName, to: output)
        for thread in profile.threads {
            begin()
            metadata("thread_name", pid: pid, tid: thread.tid,
                     value: thread.name.isEmpty ? "thread \(thread.tid)" : thread.name, to: output)
        }
        // Each function's `"name":...,"cat":"call"` and source location, made once.
        let functionFields = NameArena(profile.functions.map { function in
            ByteOutput.text { scratch in
                scratch.write(static: "{\"name\":")
                scratch.writeJSONString(function.name)
                scratch.write(static: ",\"cat\":\"call\",\"ph\":\"X\",\"pid\":")
                scratch.writeInteger(pid)
            }
        })
        for thread in profile.threads {
            let tid = Array(",\"tid\":\(thread.tid)".utf8)
            CallTimeline.walk(thread, measured: profile.measured, open: { call, start, end in
                begin()
                writeCall(call, of: thread, start: start, end: end, fields: functionFields, tid: tid, profile: profile,
                          to: output)
            }, close: { _, _ in })
        }
        for mark in profile.marks {
            begin()
            instant(mark.name, category: "mark", tid: mark.tid, at: mark.at.sinceStart.value, pid: pid, to: output)
            if !mark.extra.isEmpty {
                output.write(static: ",\"args\":{\"extra\":")
                output.writeJSONString(mark.extra)
                output.write(byte: UInt8(ascii: "}"))
            }
            output.write(byte: UInt8(ascii: "}"))
        }
        for frame in profile.frames {
            begin()
            instant("frame", category: "frame", tid: profile.frameThread ?? pid, at: frame.sinceStart.value, pid: pid,
                    to: output)
            output.write(byte: UInt8(ascii: "}"))
        }
        for hang in profile.hangs {
            begin()
            writeHang(hang, profile: profile, to: output)
        }
        for (index, span) in profile.spans.enumerated() {
            let id = "0x" + String(index + 1, radix: 16)
            begin()
            asyncEvent(span.name, phase: "b", id: id, tid: span.beginTid, at: span.begin.sinceStart.value, pid: pid, to: output)
            output.write(static: ",\"args\":{\"begin_tid\":")
            output.writeInteger(span.beginTid)
            if !span.extra.isEmpty {
                output.write(static: ",\"extra\":")
                output.writeJSONString(span.extra)
            }
            output.write(static: "}}")
            for milestone in span.milestones {
                begin()
                asyncEvent(milestone.name, phase: "n", id: id, tid: milestone.tid, at: milestone.at.sinceStart.value, pid: pid,
                           to: output)
                output.write(static: ",\"args\":{\"span\":")
                output.writeJSONString(span.name)
                output.write(static: "}}")
            }
            guard let end = span.end ?? profile.ended else { continue }
            begin()
            asyncEvent(span.name, phase: "e", id: id, tid: span.endTid ?? span.beginTid, at: end.sinceStart.value, pid: pid,
                       to: output)
            if let endTid = span.endTid {
                output.write(static: ",\"args\":{\"end_tid\":")
                output.writeInteger(endTid)
                output.write(static: "}}")
            } else {
                output.write(static: ",\"args\":{\"unfinished\":true}}")
            }
        }
        output.write(byte: UInt8(ascii: "\n"))
        nesting.close(downTo: 0, in: output)
        output.write(byte: UInt8(ascii: "\n"))
    }

    /// One call, a complete ("X") event: `fields` holds each function's name, category, phase and pid.
    private static func writeCall(_ call: Int, of thread: ProfileThread, start: Int64, end: Int64, fields: NameArena,
                                  tid: [UInt8], profile: Profile, to output: ByteOutput) {
        output.write(fields[Int(thread.function[call])])
        output.write(tid)
        output.write(static: ",\"ts\":")
        writeMicroseconds(start, to: output)
        output.write(static: ",\"dur\":")
        writeMicroseconds(end - start, to: output)
        output.write(static: ",\"args\":{\"cost_ms\":")
        output.writeMilliseconds(thread.cost(call))
        let flags = thread.flags(call)
        if flags.contains(.unfinished) { output.write(static: ",\"unfinished\":true") }
        if flags.contains(.unwound) { output.write(static: ",\"unwound\":true") }
        let function = profile.functions[Int(thread.function[call])]
        if let file = function.file {
            output.write(static: ",\"file\":")
            output.writeJSONString(file)
        }
        if let line = function.line {
            output.write(static: ",\"line\":")
            output.writeInteger(line)
        }
        if let split = thread.split(call) {
            output.writeJSONMilliseconds([("cpu_ms", split.cpu), ("preempted_ms", split.preempted),
                                          ("blocked_ms", split.blocked)])
            if !split.blockedOn.isEmpty {
                output.write(static: ",\"blocked_on\":")
                output.writeJSONString(split.blockedOnText)
            }
        }
        output.write(static: "}}")
    }

    /// A hang, an instant with its quiet time and native stack.
    private static func writeHang(_ hang: ProfileHang, profile: Profile, to output: ByteOutput) {
        instant("hang in " + profile.functions[hang.function].name, category: "hang", tid: hang.tid,
                at: hang.at.sinceStart.value, pid: profile.pid, to: output)
        output.write(static: ",\"args\":{\"quiet_ms\":")
        output.writeMilliseconds(hang.quiet)
        output.write(static: ",\"stack\":[")
        for (index, frame) in hang.stack.enumerated() {
            if index > 0 { output.write(byte: UInt8(ascii: ",")) }
            let function = profile.functions[frame]
            output.writeJSONString(function.name + (function.module.map { " (\($0))" } ?? ""))
        }
        output.write(static: "]}}")
    }

    private static func metadata(_ name: StaticString, pid: UInt64, tid: UInt64, value: String, to output: ByteOutput) {
        output.write(static: "{\"name\":\"")
        output.write(static: name)
        output.write(static: "\",\"ph\":\"M\",\"pid\":")
        output.writeInteger(pid)
        output.write(static: ",\"tid\":")
        output.writeInteger(tid)
        output.write(static: ",\"args\":{\"name\":")
        output.writeJSONString(value)
        output.write(static: "}}")
    }

    /// An instant event without its closing brace (the caller may add `args`).
    private static func instant(_ name: String, category: StaticString, tid: UInt64, at: Int64, pid: UInt64,
                                to output: ByteOutput) {
        output.write(static: "{\"name\":")
        output.writeJSONString(name)
        output.write(static: ",\"cat\":\"")
        output.write(static: category)
        output.write(static: "\",\"ph\":\"i\",\"s\":\"t\",\"pid\":")
        output.writeInteger(pid)
        output.write(static: ",\"tid\":")
        output.writeInteger(tid)
        output.write(static: ",\"ts\":")
        writeMicroseconds(at, to: output)
    }

    /// A nestable async event of a span (`b`, `n`, `e`) without its closing brace.
    private static func asyncEvent(_ name: String, phase: StaticString, id: String, tid: UInt64, at: Int64, pid: UInt64,
                                   to output: ByteOutput) {
        output.write(static: "{\"name\":")
        output.writeJSONString(name)
        output.write(static: ",\"cat\":\"span\",\"ph\":\"")
        output.write(static: phase)
        output.write(static: "\",\"id\":\"")
        output.write(id)
        output.write(static: "\",\"pid\":")
        output.writeInteger(pid)
        output.write(static: ",\"tid\":")
        output.writeInteger(tid)
        output.write(static: ",\"ts\":")
        writeMicroseconds(at, to: output)
    }

    /// Microseconds with three decimals (nanoseconds exact); negatives as 0.
    static func writeMicroseconds(_ ns: Int64, to output: ByteOutput) {
        output.write(fixed: UInt64(max(ns, 0)), decimals: 3, width: 0)
    }
}
