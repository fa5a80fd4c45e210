/// `export --format otlp`: OpenTelemetry traces in OTLP/JSON as the Collector's file exporter writes
/// them: JSON Lines, each line one `ExportTraceServiceRequest`, which `export --endpoint` posts to
/// an OTLP/HTTP receiver as it is.
///
/// - One trace per profile. Its id is a hash of the pid, the start time and the program, so
///   exporting the same file again gives the same ids; span ids are serial numbers (the process
///   span 1, then the calls thread by thread in exit order, then the marks, then the spans),
///   unique within the trace.
/// - A process span (named by the program) spans the run and parents every thread's top calls; a
///   crash makes its status an error; each hang is an event on it (`hang in F`, with the thread,
///   the quiet time and the native stack, innermost first, one frame a line, in `code.stacktrace`).
/// - Each call is an internal span from its start to its measured end (wall time, hooks included;
///   the trace's clock calibration gives unix time), moved inside its parent's where ticks
///   converted one by one put it a nanosecond out, named by its function, with
///   `code.function.name`, `code.file.path`/`code.line.number` when known (OpenTelemetry's
///   current code attributes), `thread.id`, `thread.name`, and its cost with the hooks' overhead
///   taken out (`calltrace.cost_ns`); `calltrace.unfinished`/`calltrace.unwound` when true; when its
///   thread was sampled, where the cost went: `calltrace.cpu_ns`, `calltrace.preempted_ns`,
///   `calltrace.blocked_ns`, and `calltrace.blocked_on` ("read pipe 30.00 ms, futex 8.00 ms") when blocked.
/// - Each mark is a zero-length span named by the mark (`calltrace.mark` true, its extra text in
///   `calltrace.mark.extra`) under the innermost call of its thread open at that moment (the first
///   call to end whose [start, end) holds it; the first thread of its tid). Frames are left out
///   (one span a frame would swamp a trace viewer).
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
/// - The order: the process span; thread by thread, its calls latest first (a call before its
///   children: the order `OTLPExportStream` can write them in without the tree) and then its
///   marks by time; marks of threads with no calls; the program's spans.
///
/// ```
/// {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"app"}},...]},
///  "scopeSpans":[{"scope":{"name":"calltrace","version":"0.1.0"},"spans":[
///  {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"0000000000000029","parentSpanId":"0000000000000001",
///   "name":"main","kind":1,"startTimeUnixNano":"1700000000005310000","endTimeUnixNano":"1700000000126710000",
///   "attributes":[{"key":"code.function.name","value":{"stringValue":"main"}},...]}]}]}]}
/// ```
public enum OTLPExport: ProfileView {
    public static let command = ViewCommand.export
    public static let format = "otlp"
    public static let summary = "OpenTelemetry OTLP/JSON lines, one ExportTraceServiceRequest a line"
    public static let needsLines = true

    public static func stream(options: ViewOptions) -> (any ViewStream)? { OTLPExportStream() }

    /// Limits of one line (one request).
    static let spansPerRequest = 10_000
    static let bytesPerRequest = 4 << 20

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        render(input, options: options, to: output, spansPerRequest: spansPerRequest)
    }

    static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput, spansPerRequest: Int) {
        guard let profile = input.profiles.first else { return }
        var writer = OTLPRequestWriter(profile: profile, callCount: profile.callCount, options: options, output: output,
                                   spansPerRequest: max(spansPerRequest, 1))
        var roots = RootsSpan()
        for thread in profile.threads {
            for root in thread.roots {
                let start = thread.start(Int(root)).sinceStart.value
                roots.add(start: start, end: callEnd(thread.end(Int(root), measured: profile.measured), start: start))
            }
        }
        writer.writeProcessSpan(roots: roots)
        let marks = ThreadMarks(profile)
        var firstSpan = UInt64(2) // of the thread's calls
        for (index, thread) in profile.threads.enumerated() {
            writer.beginThread(tid: thread.tid, name: thread.name)
            var placement = MarkPlacement(marks.of(thread: index), of: profile)
            if !placement.isEmpty {
                for call in 0..<thread.count {
                    let start = thread.start(call).sinceStart.value
                    placement.offer(call: call, start: start,
                                    end: callEnd(thread.end(call, measured: profile.measured), start: start))
                }
            }
            // Backwards in exit order: a call before its children, so each is placed inside its parent.
            // Only the calls that placing moved (rare: a nanosecond out) are kept, so that the
            // memory does not grow with the calls: the others are where their times say.
            var moved: [Int32: (start: Int64, end: Int64)] = [:]
            func times(_ call: Int) -> (start: Int64, end: Int64) {
                let start = thread.start(call).sinceStart.value
                return (start, callEnd(thread.end(call, measured: profile.measured), start: start))
            }
            for call in (0..<thread.count).reversed() {
                let parentCall = Int(thread.parent[call])
                let own = times(call)
                let inside = parentCall < 0 ? (start: Int64.min, end: Int64.max)
                    : moved.isEmpty ? times(parentCall) : moved[Int32(parentCall)] ?? times(parentCall)
                let time = Self.place(start: own.start, end: own.end, inside: inside)
                if time != own { moved[Int32(call)] = time }
                writer.writeCall(function: Int(thread.function[call]), cost: thread.cost(call).value,
                                 flags: thread.flags(call), span: firstSpan + UInt64(call),
                                 parent: parentCall >= 0 ? firstSpan + UInt64(parentCall) : OTLPRequestWriter.processSpan,
                                 start: time.start, end: time.end, split: thread.split(call))
            }
            placement.write(with: &writer, firstSpan: firstSpan)
            firstSpan += UInt64(thread.count)
        }
        writer.writeOtherSpans(orphanMarks: marks.orphans)
    }

    /// A call's span ends at its measured end, never before it starts (a damaged trace's).
    static func callEnd(_ end: Instant, start: Int64) -> Int64 { max(end.sinceStart.value, start) }

    /// A call's span from `start` to `end`, moved inside its parent's (`inside`, as placed): times
    /// converted from ticks one by one can put a child's end a nanosecond past its parent's.
    static func place(start: Int64, end: Int64, inside parent: (start: Int64, end: Int64)) -> (start: Int64, end: Int64) {
        let start = min(max(start, parent.start), parent.end)
        return (start, min(max(end, start), parent.end))
    }

    /// The earliest start and latest end of the threads' root calls: the process span covers them.
    struct RootsSpan {
        var start: Int64 = 0
        var end: Int64 = .min

        mutating func add(start: Int64, end: Int64) {
            self.start = min(self.start, start)
            self.end = max(self.end, end)
        }
    }

    /// Which thread's spans each mark goes with: the first thread of the mark's tid (a tid used
    /// again by a later thread gets none), in time order; marks of no thread are `orphans`.
    struct ThreadMarks {
        private var byThread: [Int: [Int]] = [:]
        private(set) var orphans: [Int] = []

        init(_ profile: Profile) {
            var threadOf: [UInt64: Int] = [:]
            for (index, thread) in profile.threads.enumerated() where threadOf[thread.tid] == nil {
                threadOf[thread.tid] = index
            }
            let ordered = profile.marks.indices.sorted {
                (profile.marks[$0].at.sinceStart.value, $0) < (profile.marks[$1].at.sinceStart.value, $1)
            }
            for index in ordered {
                if let thread = threadOf[profile.marks[index].tid] {
                    byThread[thread, default: []].append(index)
                } else {
                    orphans.append(index)
                }
            }
        }

        func of(thread: Int) -> [Int] { byThread[thread] ?? [] }
    }

    /// Where one thread's marks go: under the innermost call whose [start, end) holds the mark,
    /// which is the first such call to end; offered the thread's calls in exit order, each mark
    /// takes the first that holds it (a "next unplaced" chain skips the placed ones, so each mark
    /// is placed once: linear in calls and marks, whatever the trace's times).
    struct MarkPlacement {
        /// Mark indexes by time, their times, and each one's call (-1: none, the process span).
        private let marks: [Int]
        private let times: [Int64]
        private var call: [Int]
        /// For each position, the first unplaced one at or after it (path-halved).
        private var next: [Int]

        init(_ marks: [Int], of profile: Profile) {
            self.marks = marks
            times = marks.map { profile.marks[$0].at.sinceStart.value }
            call = [Int](repeating: -1, count: marks.count)
            next = Array(0...marks.count)
        }

        var isEmpty: Bool { marks.isEmpty }

        /// The thread's call `index` (exit order), from `start` to `end`.
        mutating func offer(call index: Int, start: Int64, end: Int64) {
            guard let last = times.last, start <= last, end > times[0] else { return }
            var low = 0
            var high = times.count
            while low < high {
                let middle = (low + high) / 2
                if times[middle] < start { low = middle + 1 } else { high = middle }
            }
            var position = unplaced(low)
            while position < times.count, times[position] < end {
                call[position] = index
                next[position] = position + 1
                position = unplaced(position + 1)
            }
        }

        private mutating func unplaced(_ position: Int) -> Int {
            var at = position
            while next[at] != at {
                next[at] = next[next[at]]
                at = next[at]
            }
            return at
        }

        /// The marks, each under its call's span (the thread's calls' spans start at `firstSpan`).
        func write(with writer: inout OTLPRequestWriter, firstSpan: UInt64) {
            for (position, index) in marks.enumerated() {
                writer.writeMark(index, parent: call[position] >= 0 ? firstSpan + UInt64(call[position])
                                                                      : OTLPRequestWriter.processSpan)
            }
        }
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
