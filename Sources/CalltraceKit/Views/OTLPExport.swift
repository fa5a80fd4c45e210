/// `export --format otlp`: OpenTelemetry traces in OTLP/JSON as the Collector's file exporter writes
/// them: JSON Lines, each line one `ExportTraceServiceRequest`, which `export --endpoint` posts to
/// an OTLP/HTTP receiver as it is.
///
/// - One trace per profile. Its id is a hash of the pid, the start time and the program, so
///   exporting the same file again gives the same ids; span ids are serial numbers (the process
///   span 1, then the calls thread by thread, then the marks, then the spans), unique within the
///   trace.
/// - A process span (named by the program) spans the run and parents every thread's top calls; a
///   crash makes its status an error; each hang is an event on it (`hang in F`, with the thread,
///   the quiet time and the native stack, innermost first, one frame a line, in `code.stacktrace`).
/// - Each call is an internal span placed at its measured wall time (`CallTimeline`; the trace's
///   clock calibration gives unix time), named by its function, with `code.function.name`,
///   `code.file.path`/`code.line.number` when known (OpenTelemetry's current code attributes),
///   `thread.id`, `thread.name`, and its cost with the hooks' overhead taken out
///   (`calltrace.cost_ns`); `calltrace.unfinished`/`calltrace.unwound` when true.
/// - Each mark is a zero-length span named by the mark (`calltrace.mark` true, its extra text in
///   `calltrace.mark.extra`) under the innermost call of its thread open at that moment. Frames are
///   left out (one span a frame would swamp a trace viewer).
/// - Each span the program named (`calltrace_span_begin`) is a span of the same name under the
///   process span, from its begin to its end, its ids after the marks'; `calltrace.span` true, its
///   extra text in `calltrace.span.extra`, the threads it began and ended on in
///   `calltrace.span.begin_thread.id` and `calltrace.span.end_thread.id`, each milestone a span
///   event (with its `thread.id`). One still open when the trace ended ends there,
///   `calltrace.unfinished` true.
/// - The resource: `service.name` (the program's file name), `process.pid`,
///   `process.executable.name`/`.path`, `process.command_args`, `host.name` when the caller
///   gives one (`ViewOptions.hostName`: the trace does not record its host, so the CLI passes the
///   host that exports), and `telemetry.sdk.*` naming calltrace.
/// - A line holds at most 10,000 spans and about 4 MiB, far under receivers' body limits
///   (the Collector's default is 20 MiB); every line repeats the resource and scope.
///
/// ```
/// {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"app"}},...]},
///  "scopeSpans":[{"scope":{"name":"calltrace","version":"0.1.0"},"spans":[
///  {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"0000000000000002","parentSpanId":"0000000000000001",
///   "name":"main","kind":1,"startTimeUnixNano":"1700000000005310000","endTimeUnixNano":"1700000000126710000",
///   "attributes":[{"key":"code.function.name","value":{"stringValue":"main"}},...]}]}]}]}
/// ```
public enum OTLPExport: ProfileView {
    public static let command = ViewCommand.export
    public static let format = "otlp"
    public static let summary = "OpenTelemetry OTLP/JSON lines, one ExportTraceServiceRequest a line"
    public static let needsLines = true

    /// Limits of one line (one request).
    static let spansPerRequest = 10_000
    static let bytesPerRequest = 4 << 20

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        render(input, options: options, to: output, spansPerRequest: spansPerRequest)
    }

    static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput, spansPerRequest: Int) {
        guard let profile = input.profiles.first else { return }
        var writer = RequestWriter(profile: profile, options: options, output: output,
                                   spansPerRequest: max(spansPerRequest, 1))
        writer.writeProcessSpan()
        let marksByThread = Dictionary(grouping: profile.marks.indices, by: { profile.marks[$0].tid })
        var markWritten = [Bool](repeating: false, count: profile.marks.count)
        var firstSpan = UInt64(2) // of the thread's calls
        for thread in profile.threads {
            let marks = marksByThread[thread.tid] ?? []
            var nextMark = 0
            var open: [UInt64] = [] // span ids of the open calls, innermost last
            // Marks before `time` fall in the innermost call open now.
            func writeMarks(before time: Int64) {
                while nextMark < marks.count, profile.marks[marks[nextMark]].at.sinceStart.value < time {
                    let index = marks[nextMark]
                    nextMark += 1
                    if markWritten[index] { continue } // a tid used again by a later thread
                    writer.writeMark(index, parent: open.last ?? RequestWriter.processSpan)
                    markWritten[index] = true
                }
            }
            writer.beginThread(thread)
            CallTimeline.walk(thread, measured: profile.measured, open: { call, start, end in
                writeMarks(before: start)
                let span = firstSpan + UInt64(call)
                let parentCall = thread.parent[call]
                let parent = parentCall >= 0 ? firstSpan + UInt64(parentCall) : RequestWriter.processSpan
                writer.writeCall(call, of: thread, span: span, parent: parent, start: start, end: end)
                open.append(span)
            }, close: { _, end in
                writeMarks(before: end)
                open.removeLast()
            })
            writeMarks(before: .max)
            firstSpan += UInt64(thread.count)
        }
        // Marks of threads that recorded no calls.
        for index in profile.marks.indices where !markWritten[index] {
            writer.writeMark(index, parent: RequestWriter.processSpan)
        }
        for index in profile.spans.indices { writer.writeSpan(index) }
        writer.finish()
    }

    /// A 128-bit trace id from what identifies a run: pid, start time, program (FNV-1a, then two
    /// differently seeded mixes); never zero, which OTLP reserves for "none".
    static func traceID(of profile: Profile) -> (UInt64, UInt64) {
        var fnv = FNV1a()
        for value in [profile.pid, UInt64(bitPattern: profile.unixTimeAtStart.value)] {
            for shift in stride(from: 0, to: 64, by: 8) { fnv.add(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        fnv.add(profile.program.utf8)
        let high = mix(fnv.value ^ 0x9e37_79b9_7f4a_7c15)
        let low = mix(fnv.value ^ 0xd1b5_4a32_d192_ed03)
        return (high, low == 0 && high == 0 ? 1 : low)
    }

    /// splitmix64's finaliser.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    static func writeHex(_ value: UInt64, to output: ByteOutput) {
        guard let out = output.reserve(16) else { return }
        let digits: StaticString = "0123456789abcdef"
        for index in 0..<16 {
            out[index] = digits.utf8Start[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
        }
        output.commit(16)
    }
}

/// Writes spans into requests (lines), each opened with the resource and scope and closed when
/// full.
private struct RequestWriter {
    static let processSpan: UInt64 = 1

    let profile: Profile
    let output: ByteOutput
    let spansPerRequest: Int
    /// `{"resourceSpans":[{"resource":...,"scopeSpans":[{"scope":...,"spans":[`
    let requestStart: [UInt8]
    /// What `requestStart` leaves open, and what the open request has open.
    let requestNesting: JSONNesting
    var nesting = JSONNesting()
    /// `{"traceId":"...","spanId":"`
    let spanStart: [UInt8]
    /// Per function: `,"name":...,"kind":1,"attributes":[` and its code attributes.
    let functionFields: NameArena
    let functionSizes: [Int]
    /// The current thread's `{"key":"thread.id",...},{"key":"thread.name",...}`.
    var threadFields: [UInt8] = []
    var spansInRequest = 0
    var bytesInRequest = 0
    let firstMarkSpan: UInt64

    init(profile: Profile, options: ViewOptions, output: ByteOutput, spansPerRequest: Int) {
        self.profile = profile
        self.output = output
        self.spansPerRequest = spansPerRequest
        var nesting = JSONNesting()
        requestStart = Array(ByteOutput.text { out in
            nesting.open(.object, in: out)
            out.write(static: "\"resourceSpans\":")
            nesting.open(.array, in: out)
            nesting.open(.object, in: out)
            out.write(static: "\"resource\":")
            nesting.open(.object, in: out)
            out.write(static: "\"attributes\":")
            nesting.open(.array, in: out)
            Self.attribute("service.name", string: profile.programName, to: out, first: true)
            Self.attribute("process.pid", integer: Int64(clamping: profile.pid), to: out)
            if !profile.program.isEmpty {
                Self.attribute("process.executable.name", string: profile.programName, to: out)
                Self.attribute("process.executable.path", string: profile.program, to: out)
            }
            if !profile.arguments.isEmpty {
                out.write(static: ",{\"key\":\"process.command_args\",\"value\":{\"arrayValue\":{\"values\":[")
                for (index, argument) in profile.arguments.enumerated() {
                    out.write(static: index == 0 ? "{\"stringValue\":" : ",{\"stringValue\":")
                    out.writeJSONString(argument)
                    out.write(byte: UInt8(ascii: "}"))
                }
                out.write(static: "]}}}")
            }
            if let host = options.hostName, !host.isEmpty { Self.attribute("host.name", string: host, to: out) }
            Self.attribute("telemetry.sdk.name", string: "calltrace", to: out)
            if !options.version.isEmpty { Self.attribute("telemetry.sdk.version", string: options.version, to: out) }
            nesting.close(in: out)  // the attributes
            nesting.close(in: out)  // the resource
            out.write(static: ",\"scopeSpans\":")
            nesting.open(.array, in: out)
            nesting.open(.object, in: out)
            out.write(static: "\"scope\":")
            nesting.open(.object, in: out)
            out.write(static: "\"name\":\"calltrace\"")
            if !options.version.isEmpty {
                out.write(static: ",\"version\":")
                out.writeJSONString(options.version)
            }
            nesting.close(in: out)  // the scope
            out.write(static: ",\"spans\":")
            nesting.open(.array, in: out)
        }.utf8)
        requestNesting = nesting
        let (high, low) = OTLPExport.traceID(of: profile)
        spanStart = Array(ByteOutput.text { out in
            out.write(static: "{\"traceId\":\"")
            OTLPExport.writeHex(high, to: out)
            OTLPExport.writeHex(low, to: out)
            out.write(static: "\",\"spanId\":\"")
        }.utf8)
        let fields = profile.functions.map { function in
            ByteOutput.text { out in
                out.write(static: "\",\"name\":")
                out.writeJSONString(function.name)
                out.write(static: ",\"kind\":1,\"attributes\":[")
                Self.attribute("code.function.name", string: function.name, to: out, first: true)
                if let file = function.file { Self.attribute("code.file.path", string: file, to: out) }
                if let line = function.line { Self.attribute("code.line.number", integer: Int64(line), to: out) }
            }
        }
        functionFields = NameArena(fields)
        functionSizes = fields.map { $0.utf8.count }
        firstMarkSpan = 2 + UInt64(profile.callCount)
    }

    /// The process span, with hangs as events and a crash as an error status.
    mutating func writeProcessSpan() {
        var start: Int64 = 0
        var end = profile.ended?.sinceStart.value ?? 0
        for thread in profile.threads {
            for root in thread.roots {
                start = min(start, thread.start(Int(root)).sinceStart.value)
                end = max(end, thread.end(Int(root), measured: profile.measured).sinceStart.value)
            }
        }
        for mark in profile.marks { end = max(end, mark.at.sinceStart.value) }
        for hang in profile.hangs { end = max(end, hang.at.sinceStart.value) }
        for index in profile.spans.indices { end = max(end, spanEnd(index)) }
        beginSpan(bytes: 512 + profile.hangs.reduce(0) { $0 + 256 + 128 * $1.stack.count })
        output.write(spanStart)
        OTLPExport.writeHex(Self.processSpan, to: output)
        output.write(static: "\",\"name\":")
        output.writeJSONString(profile.programName)
        output.write(static: ",\"kind\":1,\"attributes\":[")
        Self.attribute("process.pid", integer: Int64(clamping: profile.pid), to: output, first: true)
        let exit: String
        switch profile.exit {
        case .clean: exit = "clean"
        case .crashed(let signal): exit = "crashed (signal \(signal))"
        case .stillRunning: exit = "still running"
        case .unknown: exit = "unknown"
        }
        Self.attribute("calltrace.exit", string: exit, to: output)
        output.write(byte: UInt8(ascii: "]"))
        writeTimes(start: start, end: end)
        if case .crashed = profile.exit {
            output.write(static: ",\"status\":{\"code\":2,\"message\":")
            output.writeJSONString(exit)
            output.write(byte: UInt8(ascii: "}"))
        }
        if !profile.hangs.isEmpty {
            output.write(static: ",\"events\":[")
            for (index, hang) in profile.hangs.enumerated() {
                if index > 0 { output.write(byte: UInt8(ascii: ",")) }
                output.write(static: "{\"timeUnixNano\":\"")
                writeUnixTime(hang.at.sinceStart.value)
                output.write(static: "\",\"name\":")
                let function = profile.functions[hang.function].name
                output.writeJSONString("hang in " + function)
                output.write(static: ",\"attributes\":[")
                Self.attribute("code.function.name", string: function, to: output, first: true)
                Self.attribute("thread.id", integer: Int64(clamping: hang.tid), to: output)
                Self.attribute("calltrace.hang.quiet_ns", integer: hang.quiet.value, to: output)
                if hang.isPartial { Self.attribute("calltrace.hang.partial", bool: true, to: output) }
                let stack = hang.stack.map { frame in
                    let function = profile.functions[frame]
                    return function.name + (function.module.map { " (\($0))" } ?? "")
                }
                Self.attribute("code.stacktrace", string: stack.joined(separator: "\n"), to: output)
                output.write(static: "]}")
            }
            output.write(byte: UInt8(ascii: "]"))
        }
        output.write(byte: UInt8(ascii: "}"))
    }

    mutating func beginThread(_ thread: ProfileThread) {
        threadFields = Array(ByteOutput.text { out in
            Self.attribute("thread.id", integer: Int64(clamping: thread.tid), to: out)
            if !thread.name.isEmpty { Self.attribute("thread.name", string: thread.name, to: out) }
        }.utf8)
    }

    mutating func writeCall(_ call: Int, of thread: ProfileThread, span: UInt64, parent: UInt64, start: Int64,
                            end: Int64) {
        let function = Int(thread.function[call])
        beginSpan(bytes: 256 + functionSizes[function] + threadFields.count)
        output.write(spanStart)
        OTLPExport.writeHex(span, to: output)
        output.write(static: "\",\"parentSpanId\":\"")
        OTLPExport.writeHex(parent, to: output)
        output.write(functionFields[function])
        output.write(threadFields)
        output.write(static: ",{\"key\":\"calltrace.cost_ns\",\"value\":{\"intValue\":\"")
        output.writeInteger(thread.cost(call).value)
        output.write(static: "\"}}")
        let flags = thread.flags(call)
        if flags.contains(.unfinished) { Self.attribute("calltrace.unfinished", bool: true, to: output) }
        if flags.contains(.unwound) { Self.attribute("calltrace.unwound", bool: true, to: output) }
        output.write(byte: UInt8(ascii: "]"))
        writeTimes(start: start, end: end)
        output.write(byte: UInt8(ascii: "}"))
    }

    mutating func writeMark(_ index: Int, parent: UInt64) {
        let mark = profile.marks[index]
        beginSpan(bytes: 384 + mark.name.utf8.count + mark.extra.utf8.count)
        output.write(spanStart)
        OTLPExport.writeHex(firstMarkSpan + UInt64(index), to: output)
        output.write(static: "\",\"parentSpanId\":\"")
        OTLPExport.writeHex(parent, to: output)
        output.write(static: "\",\"name\":")
        output.writeJSONString(mark.name)
        output.write(static: ",\"kind\":1,\"attributes\":[")
        Self.attribute("calltrace.mark", bool: true, to: output, first: true)
        if !mark.extra.isEmpty { Self.attribute("calltrace.mark.extra", string: mark.extra, to: output) }
        Self.attribute("thread.id", integer: Int64(clamping: mark.tid), to: output)
        output.write(byte: UInt8(ascii: "]"))
        writeTimes(start: mark.at.sinceStart.value, end: mark.at.sinceStart.value)
        output.write(byte: UInt8(ascii: "}"))
    }

    /// When span `index` ended: its end, else when the trace ended, else its last milestone.
    private func spanEnd(_ index: Int) -> Int64 {
        let span = profile.spans[index]
        let last = span.milestones.reduce(span.begin.sinceStart.value) { max($0, $1.at.sinceStart.value) }
        return max((span.end ?? profile.ended)?.sinceStart.value ?? last, last)
    }

    mutating func writeSpan(_ index: Int) {
        let span = profile.spans[index]
        beginSpan(bytes: 512 + span.name.utf8.count + span.extra.utf8.count
                  + span.milestones.reduce(0) { $0 + 160 + $1.name.utf8.count })
        output.write(spanStart)
        OTLPExport.writeHex(firstMarkSpan + UInt64(profile.marks.count) + UInt64(index), to: output)
        output.write(static: "\",\"parentSpanId\":\"")
        OTLPExport.writeHex(Self.processSpan, to: output)
        output.write(static: "\",\"name\":")
        output.writeJSONString(span.name)
        output.write(static: ",\"kind\":1,\"attributes\":[")
        Self.attribute("calltrace.span", bool: true, to: output, first: true)
        if !span.extra.isEmpty { Self.attribute("calltrace.span.extra", string: span.extra, to: output) }
        Self.attribute("calltrace.span.begin_thread.id", integer: Int64(clamping: span.beginTid), to: output)
        if let endTid = span.endTid {
            Self.attribute("calltrace.span.end_thread.id", integer: Int64(clamping: endTid), to: output)
        }
        if span.isUnfinished { Self.attribute("calltrace.unfinished", bool: true, to: output) }
        output.write(byte: UInt8(ascii: "]"))
        writeTimes(start: span.begin.sinceStart.value, end: spanEnd(index))
        if !span.milestones.isEmpty {
            output.write(static: ",\"events\":[")
            for (position, milestone) in span.milestones.enumerated() {
                if position > 0 { output.write(byte: UInt8(ascii: ",")) }
                output.write(static: "{\"timeUnixNano\":\"")
                writeUnixTime(milestone.at.sinceStart.value)
                output.write(static: "\",\"name\":")
                output.writeJSONString(milestone.name)
                output.write(static: ",\"attributes\":[")
                Self.attribute("thread.id", integer: Int64(clamping: milestone.tid), to: output, first: true)
                output.write(static: "]}")
            }
            output.write(byte: UInt8(ascii: "]"))
        }
        output.write(byte: UInt8(ascii: "}"))
    }

    /// Closes the last request.
    mutating func finish() {
        if spansInRequest > 0 {
            nesting.close(downTo: 0, in: output)
            output.write(byte: UInt8(ascii: "\n"))
        }
        spansInRequest = 0
    }

    /// Starts a request when none is open or the open one is full; a comma between spans.
    private mutating func beginSpan(bytes: Int) {
        if spansInRequest > 0 && (spansInRequest >= spansPerRequest || bytesInRequest + bytes > OTLPExport.bytesPerRequest) {
            finish()
        }
        if spansInRequest == 0 {
            output.write(requestStart)
            nesting = requestNesting
            bytesInRequest = requestStart.count
        } else {
            output.write(byte: UInt8(ascii: ","))
        }
        spansInRequest += 1
        bytesInRequest += bytes
    }

    /// `,"startTimeUnixNano":"...","endTimeUnixNano":"..."` (uint64 are strings in OTLP/JSON).
    private func writeTimes(start: Int64, end: Int64) {
        output.write(static: ",\"startTimeUnixNano\":\"")
        writeUnixTime(start)
        output.write(static: "\",\"endTimeUnixNano\":\"")
        writeUnixTime(end)
        output.write(byte: UInt8(ascii: "\""))
    }

    /// Unix nanoseconds of an instant (nanoseconds since the profile's start); never negative.
    private func writeUnixTime(_ sinceStart: Int64) {
        output.write(UInt64(max(profile.unixTimeAtStart.value &+ sinceStart, 0)), width: 0)
    }

    private static func attribute(_ key: StaticString, string: String, to output: ByteOutput, first: Bool = false) {
        attributeKey(key, to: output, first: first)
        output.write(static: "{\"stringValue\":")
        output.writeJSONString(string)
        output.write(static: "}}")
    }

    /// int64 values are strings in OTLP/JSON.
    private static func attribute(_ key: StaticString, integer: Int64, to output: ByteOutput, first: Bool = false) {
        attributeKey(key, to: output, first: first)
        output.write(static: "{\"intValue\":\"")
        output.writeInteger(integer)
        output.write(static: "\"}}")
    }

    private static func attribute(_ key: StaticString, bool: Bool, to output: ByteOutput, first: Bool = false) {
        attributeKey(key, to: output, first: first)
        output.write(static: bool ? "{\"boolValue\":true}}" : "{\"boolValue\":false}}")
    }

    private static func attributeKey(_ key: StaticString, to output: ByteOutput, first: Bool) {
        output.write(static: first ? "{\"key\":\"" : ",{\"key\":\"")
        output.write(static: key)
        output.write(static: "\",\"value\":")
    }
}
