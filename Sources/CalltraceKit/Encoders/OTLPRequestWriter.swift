/// Writes spans into requests (lines), each opened with the resource and scope and closed when
/// full.
struct OTLPRequestWriter {
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

    /// `callCount`: the profile's calls (a streamed profile holds none).
    init(profile: Profile, callCount: Int, options: ViewOptions, output: ByteOutput, spansPerRequest: Int) {
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
        firstMarkSpan = 2 + UInt64(callCount)
    }

    /// The process span, with hangs as events and a crash as an error status; it covers the
    /// threads' `roots`, the marks, hangs and spans, and lasts until the trace ended.
    mutating func writeProcessSpan(roots: OTLPExport.RootsSpan) {
        let start = roots.start
        var end = max(profile.ended?.sinceStart.value ?? 0, roots.end)
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

    mutating func beginThread(tid: UInt64, name: String) {
        threadFields = Array(ByteOutput.text { out in
            Self.attribute("thread.id", integer: Int64(clamping: tid), to: out)
            if !name.isEmpty { Self.attribute("thread.name", string: name, to: out) }
        }.utf8)
    }

    /// A call of the thread begun last: `cost` in nanoseconds, `start` and `end` since the
    /// profile's start; `split`, where its cost went, when its thread was sampled
    /// (`calltrace.cpu_ns`, `calltrace.preempted_ns`, `calltrace.blocked_ns` and, when it was
    /// blocked, `calltrace.blocked_on`: "read pipe 30.00 ms, futex 8.00 ms").
    mutating func writeCall(function: Int, cost: Int64, flags: ProfileThread.CallFlags, span: UInt64, parent: UInt64,
                            start: Int64, end: Int64, split: TimeSplit?) {
        let blockedOn = split?.blockedOnText ?? ""
        beginSpan(bytes: 256 + functionSizes[function] + threadFields.count + (split == nil ? 0 : 192 + blockedOn.utf8.count))
        output.write(spanStart)
        OTLPExport.writeHex(span, to: output)
        output.write(static: "\",\"parentSpanId\":\"")
        OTLPExport.writeHex(parent, to: output)
        output.write(functionFields[function])
        output.write(threadFields)
        output.write(static: ",{\"key\":\"calltrace.cost_ns\",\"value\":{\"intValue\":\"")
        output.writeInteger(cost)
        output.write(static: "\"}}")
        if flags.contains(.unfinished) { Self.attribute("calltrace.unfinished", bool: true, to: output) }
        if flags.contains(.unwound) { Self.attribute("calltrace.unwound", bool: true, to: output) }
        if let split {
            Self.attribute("calltrace.cpu_ns", integer: split.cpu.value, to: output)
            Self.attribute("calltrace.preempted_ns", integer: split.preempted.value, to: output)
            Self.attribute("calltrace.blocked_ns", integer: split.blocked.value, to: output)
            if !blockedOn.isEmpty { Self.attribute("calltrace.blocked_on", string: blockedOn, to: output) }
        }
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

    /// The marks of no thread's (under the process span), then the program's spans; closes the
    /// last request.
    mutating func writeOtherSpans(orphanMarks: [Int]) {
        for index in orphanMarks { writeMark(index, parent: Self.processSpan) }
        for index in profile.spans.indices { writeSpan(index) }
        finish()
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
