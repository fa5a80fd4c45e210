/// `export --format perfetto`: Perfetto's native protobuf trace (a `Trace`, a stream of
/// `TracePacket`s; perfetto/protos/perfetto/trace/), which ui.perfetto.dev and trace_processor
/// open. It stays small where JSON does not: names are sent once and a call is two short packets.
///
/// - Tracks: one for the process (`ProcessDescriptor`: pid, name, command line), one for each
///   thread (`ThreadDescriptor`), and two under the process, "frames" and "hangs".
/// - Each thread's calls on a packet sequence of their own, as `TYPE_SLICE_BEGIN` and
///   `TYPE_SLICE_END` at their measured wall time (`CallTimeline`: children end before their
///   parents; a call still running when the trace ended ends there, `unfinished`). A function's
///   name (`EventName`) and source file and line (`SourceLocation`) are interned with its first
///   call on the sequence; the call's cost, overhead taken out, is a `cost_ns` debug annotation;
///   `unfinished` and `unwound` are annotations when true.
/// - Marks: `TYPE_INSTANT` events on their thread's track (the extra text in an `extra`
///   annotation). Frames: slices on "frames" from one frame start to the next (the last one an
///   instant). Hangs: slices on "hangs" over the time the thread was quiet, named `hang in F`,
///   with the native stack, innermost first, in a `stack` annotation.
/// - Spans (`calltrace_span_begin`): each on an async track of its own under the process, named
///   by the span (the UI groups a name's tracks), a slice from its begin to its end with `extra`,
///   `begin_tid` and `end_tid` annotations, and its milestones as instant events on that track
///   (a `tid` annotation each). A span still open when the trace ended ends there, `unfinished`.
///   Without spans the output is as it was before them.
/// - Thread states (a trace whose threads were sampled, `ProfileThread.states`): a "state" track
///   under each sampled thread, its time as slices "Running", "Runnable (preempted)" and
///   "Blocked: read pipe", laid out inside each sample interval as `ThreadTime.segments` says.
///
/// Timestamps are nanoseconds since the process started (the profile's `Instant`), on Perfetto's
/// default clock; the UI shows times from the trace's first event.
///
/// ```
/// packet { track_descriptor { uuid: 2 parent_uuid: 1 thread { pid: 4242 tid: 4242 thread_name: "app" } } ... }
/// packet { timestamp: 5310000 trusted_packet_sequence_id: 2 sequence_flags: 3
///          track_event { type: TYPE_SLICE_BEGIN track_uuid: 2 name_iid: 1 debug_annotations { name_iid: 1 uint_value: 121400000 } }
///          interned_data { event_names { iid: 1 name: "main" } } }
/// packet { timestamp: 126710000 trusted_packet_sequence_id: 2 track_event { type: TYPE_SLICE_END track_uuid: 2 } }
/// ```
public enum PerfettoExport: ProfileView {
    public static let command = ViewCommand.export
    public static let format = "perfetto"
    public static let summary = "Perfetto's protobuf trace (ui.perfetto.dev)"
    public static let needsLines = true
    public static let isBinary = true

    // Field numbers, from perfetto_trace.proto.
    private enum Trace { static let packet = 1 }
    private enum TracePacket {
        static let timestamp = 8, trustedPacketSequenceID = 10, trackEvent = 11, internedData = 12,
                   sequenceFlags = 13, trackDescriptor = 60, firstPacketOnSequence = 87
        static let incrementalStateCleared: UInt64 = 1, needsIncrementalState: UInt64 = 2
    }
    private enum TrackDescriptor { static let uuid = 1, name = 2, process = 3, thread = 4, parentUUID = 5 }
    private enum ProcessDescriptor { static let pid = 1, cmdline = 2, processName = 6 }
    private enum ThreadDescriptor { static let pid = 1, tid = 2, threadName = 5 }
    private enum TrackEvent {
        static let debugAnnotations = 4, type = 9, nameIID = 10, trackUUID = 11, name = 23, sourceLocationIID = 34
        static let sliceBegin: UInt64 = 1, sliceEnd: UInt64 = 2, instant: UInt64 = 3
    }
    private enum InternedData { static let eventNames = 2, debugAnnotationNames = 3, sourceLocations = 4 }
    /// EventName and DebugAnnotationName.
    private enum InternedString { static let iid = 1, name = 2 }
    private enum SourceLocation { static let iid = 1, fileName = 2, functionName = 3, lineNumber = 4 }
    private enum DebugAnnotation {
        static let nameIID = 1, boolValue = 2, uintValue = 3, stringValue = 6, name = 10, arrayValues = 12
    }
    /// The interned debug annotation names of every call sequence.
    private enum AnnotationName: UInt64 { case cost = 1, unfinished, unwound }

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let packets = Packets(profile, output: output)
        packets.writeTracks()
        packets.writeCalls()
        packets.writeMarks()
        packets.writeFrames()
        packets.writeHangs()
        packets.writeSpans()
        packets.writeStates()
        packets.writer.drain(to: output)
    }

    /// One export's packets: its tracks, and the sequence the next packets go on.
    private final class Packets {
        let profile: Profile
        let output: ByteOutput
        let writer = ProtobufWriter()
        /// Sequence 1 holds the track descriptors; each thread's calls, the marks, the frames and
        /// the hangs then take the next.
        var sequence: UInt64 = 1
        let processTrack: UInt64 = 1
        /// The process's threads (the profile's in order, so thread i's track is processTrack + 1 + i
        /// even when a tid was reused), then those that only marked or hung.
        var trackThreads: [(tid: UInt64, name: String)]
        /// A tid's first track.
        var threadTracks: [UInt64: UInt64] = [:]
        let framesTrack: UInt64
        let hangsTrack: UInt64
        /// Span i's track is firstSpanTrack + i.
        var firstSpanTrack: UInt64 { hangsTrack + 1 }
        /// Thread i's state track (when it was sampled) is firstStateTrack + i.
        var firstStateTrack: UInt64 { firstSpanTrack + UInt64(profile.spans.count) }

        init(_ profile: Profile, output: ByteOutput) {
            self.profile = profile
            self.output = output
            trackThreads = profile.threads.map { (tid: $0.tid, name: $0.name) }
            for (index, thread) in trackThreads.enumerated() where threadTracks[thread.tid] == nil {
                threadTracks[thread.tid] = processTrack + 1 + UInt64(index)
            }
            for tid in profile.marks.map(\.tid) + profile.hangs.map(\.tid) where threadTracks[tid] == nil {
                threadTracks[tid] = processTrack + 1 + UInt64(trackThreads.count)
                trackThreads.append((tid, ""))
            }
            framesTrack = processTrack + 1 + UInt64(trackThreads.count)
            hangsTrack = framesTrack + 1
        }

        func packetDone() {
            writer.endMessage()
            if writer.count >= 1 << 15 { writer.drain(to: output) }
        }

        /// Sequence 1: the process's track, its threads', and "frames" and "hangs" when used.
        func writeTracks() {
            writer.beginMessage(Trace.packet)
            startSequence(sequence, flags: TracePacket.incrementalStateCleared, writer)
            writer.message(TracePacket.trackDescriptor) {
                writer.uint(TrackDescriptor.uuid, processTrack)
                writer.message(TrackDescriptor.process) {
                    writer.int(ProcessDescriptor.pid, int32(profile.pid))
                    writer.string(ProcessDescriptor.processName, profile.programName)
                    // The command line as the program got it (argv[0] first), else its path.
                    let commandLine = !profile.arguments.isEmpty ? profile.arguments
                        : profile.program.isEmpty ? [] : [profile.program]
                    for part in commandLine { writer.string(ProcessDescriptor.cmdline, part) }
                }
            }
            packetDone()
            for (index, (tid, name)) in trackThreads.enumerated() {
                writer.beginMessage(Trace.packet)
                writer.uint(TracePacket.trustedPacketSequenceID, sequence)
                writer.message(TracePacket.trackDescriptor) {
                    writer.uint(TrackDescriptor.uuid, processTrack + 1 + UInt64(index))
                    writer.uint(TrackDescriptor.parentUUID, processTrack)
                    writer.message(TrackDescriptor.thread) {
                        writer.int(ThreadDescriptor.pid, int32(profile.pid))
                        writer.int(ThreadDescriptor.tid, int32(tid))
                        if !name.isEmpty { writer.string(ThreadDescriptor.threadName, name) }
                    }
                }
                packetDone()
            }
            for (track, name, used) in [(framesTrack, "frames", !profile.frames.isEmpty),
                                        (hangsTrack, "hangs", !profile.hangs.isEmpty)] where used {
                writer.beginMessage(Trace.packet)
                writer.uint(TracePacket.trustedPacketSequenceID, sequence)
                writer.message(TracePacket.trackDescriptor) {
                    writer.uint(TrackDescriptor.uuid, track)
                    writer.uint(TrackDescriptor.parentUUID, processTrack)
                    writer.string(TrackDescriptor.name, name)
                }
                packetDone()
            }
            for (index, span) in profile.spans.enumerated() {
                writer.beginMessage(Trace.packet)
                writer.uint(TracePacket.trustedPacketSequenceID, sequence)
                writer.message(TracePacket.trackDescriptor) {
                    writer.uint(TrackDescriptor.uuid, firstSpanTrack + UInt64(index))
                    writer.uint(TrackDescriptor.parentUUID, processTrack)
                    writer.string(TrackDescriptor.name, span.name)
                }
                packetDone()
            }
            for (index, thread) in profile.threads.enumerated() where !thread.states.isEmpty {
                writer.beginMessage(Trace.packet)
                writer.uint(TracePacket.trustedPacketSequenceID, sequence)
                writer.message(TracePacket.trackDescriptor) {
                    writer.uint(TrackDescriptor.uuid, firstStateTrack + UInt64(index))
                    writer.uint(TrackDescriptor.parentUUID, processTrack + 1 + UInt64(index))
                    writer.string(TrackDescriptor.name, "state")
                }
                packetDone()
            }
        }

        /// The calls, a sequence per thread, each function's name and source location interned
        /// with its first call on the sequence.
        func writeCalls() {
            let names = NameArena(profile.functions.map(\.name))
            let files = NameArena(profile.functions.map { $0.file ?? "" })
            let hasFile = profile.functions.map { $0.file != nil }
            // The sequence each function's name was last interned on.
            var internedOn = [UInt64](repeating: 0, count: profile.functions.count)
            for (index, thread) in profile.threads.enumerated() where thread.count > 0 {
                sequence += 1
                let track = processTrack + 1 + UInt64(index)
                var first = true
                thread.function.withUnsafeBufferPointer { function in
                    thread.withCosts { cost in
                        CallTimeline.walk(thread, measured: profile.measured, open: { call, start, _ in
                            let f = Int(function[call])
                            let intern = internedOn[f] != sequence
                            if intern { internedOn[f] = sequence }
                            writeSliceBegin(call, of: thread, function: f, cost: cost[call], at: start, track: track,
                                            first: first, hasFile: hasFile[f])
                            if intern || first {
                                writeInternedData(function: intern ? f : nil, first: first, names: names, files: files,
                                                  hasFile: hasFile[f])
                            }
                            first = false
                            packetDone()
                        }, close: { _, end in
                            writer.beginMessage(Trace.packet)
                            writer.uint(TracePacket.timestamp, nanoseconds(end))
                            writer.uint(TracePacket.trustedPacketSequenceID, sequence)
                            writer.beginMessage(TracePacket.trackEvent)
                            writer.uint(TrackEvent.type, TrackEvent.sliceEnd)
                            writer.uint(TrackEvent.trackUUID, track)
                            writer.endMessage()
                            packetDone()
                        })
                    }
                }
            }
        }

        /// A call's TYPE_SLICE_BEGIN event, its packet left open for interned data.
        private func writeSliceBegin(_ call: Int, of thread: ProfileThread, function f: Int, cost: Int64, at start: Int64,
                                     track: UInt64, first: Bool, hasFile: Bool) {
            let iid = UInt64(f) + 1
            writer.beginMessage(Trace.packet)
            writer.uint(TracePacket.timestamp, nanoseconds(start))
            startSequence(sequence, flags: (first ? TracePacket.incrementalStateCleared : 0)
                          | TracePacket.needsIncrementalState, writer)
            writer.beginMessage(TracePacket.trackEvent)
            writer.uint(TrackEvent.type, TrackEvent.sliceBegin)
            writer.uint(TrackEvent.trackUUID, track)
            writer.uint(TrackEvent.nameIID, iid)
            if hasFile { writer.uint(TrackEvent.sourceLocationIID, iid) }
            writer.beginMessage(TrackEvent.debugAnnotations)
            writer.uint(DebugAnnotation.nameIID, AnnotationName.cost.rawValue)
            writer.uint(DebugAnnotation.uintValue, UInt64(max(cost, 0)))
            writer.endMessage()
            let flags = thread.flags(call)
            if flags.contains(.unfinished) { flag(.unfinished) }
            if flags.contains(.unwound) { flag(.unwound) }
            writer.endMessage()
        }

        private func flag(_ name: AnnotationName) {
            writer.beginMessage(TrackEvent.debugAnnotations)
            writer.uint(DebugAnnotation.nameIID, name.rawValue)
            writer.bool(DebugAnnotation.boolValue, true)
            writer.endMessage()
        }

        /// The interned data a slice brings: the annotation names on a sequence's first packet, a
        /// function's name and source location on its first call on the sequence (`function`).
        private func writeInternedData(function f: Int?, first: Bool, names: NameArena, files: NameArena, hasFile: Bool) {
            writer.beginMessage(TracePacket.internedData)
            if first {
                for (name, text) in [(AnnotationName.cost, "cost_ns"), (.unfinished, "unfinished"), (.unwound, "unwound")] {
                    writer.message(InternedData.debugAnnotationNames) {
                        writer.uint(InternedString.iid, name.rawValue)
                        writer.string(InternedString.name, text)
                    }
                }
            }
            if let f {
                let iid = UInt64(f) + 1
                writer.message(InternedData.eventNames) {
                    writer.uint(InternedString.iid, iid)
                    writer.bytes(InternedString.name, names[f])
                }
                if hasFile {
                    writer.message(InternedData.sourceLocations) {
                        writer.uint(SourceLocation.iid, iid)
                        writer.bytes(SourceLocation.fileName, files[f])
                        writer.bytes(SourceLocation.functionName, names[f])
                        if let line = profile.functions[f].line {
                            writer.uint(SourceLocation.lineNumber, UInt64(clamping: line))
                        }
                    }
                }
            }
            writer.endMessage()
        }

        /// An event on a sequence without interning (marks, frames, hangs).
        private func event(_ type: UInt64, at time: Int64, track: UInt64, name: String?, first: Bool,
                           annotations: () -> Void = {}) {
            writer.beginMessage(Trace.packet)
            writer.uint(TracePacket.timestamp, nanoseconds(time))
            startSequence(sequence, flags: first ? TracePacket.incrementalStateCleared : 0, writer)
            writer.message(TracePacket.trackEvent) {
                writer.uint(TrackEvent.type, type)
                writer.uint(TrackEvent.trackUUID, track)
                if let name { writer.string(TrackEvent.name, name) }
                annotations()
            }
            packetDone()
        }

        /// Marks: instants on their thread's track, on a sequence of their own.
        func writeMarks() {
            sequence += 1
            for (index, mark) in profile.marks.enumerated() {
                event(TrackEvent.instant, at: mark.at.sinceStart.value, track: threadTracks[mark.tid] ?? processTrack,
                      name: mark.name, first: index == 0) {
                    if !mark.extra.isEmpty {
                        writer.message(TrackEvent.debugAnnotations) {
                            writer.string(DebugAnnotation.name, "extra")
                            writer.string(DebugAnnotation.stringValue, mark.extra)
                        }
                    }
                }
            }
        }

        /// Frames: slices on "frames" from one frame start to the next, the last one an instant.
        func writeFrames() {
            sequence += 1
            for (index, frame) in profile.frames.enumerated() {
                let time = frame.sinceStart.value
                if index + 1 < profile.frames.count {
                    event(TrackEvent.sliceBegin, at: time, track: framesTrack, name: "frame", first: index == 0)
                    event(TrackEvent.sliceEnd, at: max(profile.frames[index + 1].sinceStart.value, time),
                          track: framesTrack, name: nil, first: false)
                } else {
                    event(TrackEvent.instant, at: time, track: framesTrack, name: "frame", first: index == 0)
                }
            }
        }

        /// Hangs: slices on "hangs" over the time the thread was quiet, with the native stack.
        func writeHangs() {
            sequence += 1
            var lastHangEnd = Int64.min
            for (index, hang) in profile.hangs.enumerated() {
                // Over the quiet time before the capture; never over the previous hang (one slice track).
                let end = max(hang.at.sinceStart.value, lastHangEnd)
                let start = min(max(hang.at.sinceStart.value &- hang.quiet.value, lastHangEnd), end)
                lastHangEnd = end
                let function = profile.functions.indices.contains(hang.function) ? profile.functions[hang.function].name : "?"
                event(TrackEvent.sliceBegin, at: start, track: hangsTrack, name: "hang in " + function, first: index == 0) {
                    writer.message(TrackEvent.debugAnnotations) {
                        writer.string(DebugAnnotation.name, "stack")
                        for frame in hang.stack where profile.functions.indices.contains(frame) {
                            let function = profile.functions[frame]
                            writer.message(DebugAnnotation.arrayValues) {
                                writer.string(DebugAnnotation.stringValue, function.name + (function.module.map { " (\($0))" } ?? ""))
                            }
                        }
                    }
                    if hang.isPartial {
                        writer.message(TrackEvent.debugAnnotations) {
                            writer.string(DebugAnnotation.name, "partial")
                            writer.bool(DebugAnnotation.boolValue, true)
                        }
                    }
                }
                event(TrackEvent.sliceEnd, at: end, track: hangsTrack, name: nil, first: false)
            }
        }

        /// Thread states: a slice per stretch in one state on each sampled thread's "state" track, a
        /// sequence of their own, only when any thread was sampled.
        func writeStates() {
            guard profile.threads.contains(where: { !$0.states.isEmpty }) else { return }
            sequence += 1
            var first = true
            for (index, thread) in profile.threads.enumerated() {
                let track = firstStateTrack + UInt64(index)
                for state in thread.states {
                    event(TrackEvent.sliceBegin, at: state.start.sinceStart.value, track: track,
                          name: PerfettoExport.name(of: state.state), first: first)
                    event(TrackEvent.sliceEnd, at: max(state.end.sinceStart.value, state.start.sinceStart.value),
                          track: track, name: nil, first: false)
                    first = false
                }
            }
        }

        /// Spans: a slice on each span's track, its milestones instants on it; a sequence of their
        /// own, only when there are spans, its events in time order (spans overlap).
        func writeSpans() {
            guard !profile.spans.isEmpty else { return }
            sequence += 1
            // (time, span, what): what is -1 for the begin, a milestone's index, or Int.max for the end.
            var events: [(at: Int64, span: Int, what: Int)] = []
            for (index, span) in profile.spans.enumerated() {
                let begin = span.begin.sinceStart.value
                events.append((begin, index, -1))
                var last = begin
                for (position, milestone) in span.milestones.enumerated() {
                    last = max(last, milestone.at.sinceStart.value)
                    events.append((last, index, position))
                }
                events.append((max((span.end ?? profile.ended)?.sinceStart.value ?? last, last), index, Int.max))
            }
            let order = events.indices.sorted { events[$0].at != events[$1].at ? events[$0].at < events[$1].at : $0 < $1 }
            func annotation(_ name: String, _ value: UInt64) {
                writer.message(TrackEvent.debugAnnotations) {
                    writer.string(DebugAnnotation.name, name)
                    writer.uint(DebugAnnotation.uintValue, value)
                }
            }
            for (position, event) in order.map({ events[$0] }).enumerated() {
                let span = profile.spans[event.span]
                let track = firstSpanTrack + UInt64(event.span)
                if event.what == Int.max {
                    self.event(TrackEvent.sliceEnd, at: event.at, track: track, name: nil, first: position == 0)
                } else if event.what >= 0 {
                    let milestone = span.milestones[event.what]
                    self.event(TrackEvent.instant, at: event.at, track: track, name: milestone.name, first: position == 0) {
                        annotation("tid", milestone.tid)
                    }
                } else {
                    self.event(TrackEvent.sliceBegin, at: event.at, track: track, name: span.name, first: position == 0) {
                        if !span.extra.isEmpty {
                            writer.message(TrackEvent.debugAnnotations) {
                                writer.string(DebugAnnotation.name, "extra")
                                writer.string(DebugAnnotation.stringValue, span.extra)
                            }
                        }
                        annotation("begin_tid", span.beginTid)
                        if let endTid = span.endTid { annotation("end_tid", endTid) }
                        if span.isUnfinished {
                            writer.message(TrackEvent.debugAnnotations) {
                                writer.string(DebugAnnotation.name, "unfinished")
                                writer.bool(DebugAnnotation.boolValue, true)
                            }
                        }
                    }
                }
            }
        }
    }

    /// A thread state's slice name.
    static func name(of state: ThreadTime.Segment.State) -> String {
        switch state {
        case .running: return "Running"
        case .preempted: return "Runnable (preempted)"
        case .blocked(let what): return "Blocked: " + what
        }
    }

    /// A packet's sequence id, and its `sequence_flags` when any; the first packet of a sequence
    /// (one clearing the incremental state) also says it is the first.
    @inline(__always)
    private static func startSequence(_ sequence: UInt64, flags: UInt64, _ writer: ProtobufWriter) {
        writer.uint(TracePacket.trustedPacketSequenceID, sequence)
        guard flags != 0 else { return }
        writer.uint(TracePacket.sequenceFlags, flags)
        if flags & TracePacket.incrementalStateCleared != 0 { writer.bool(TracePacket.firstPacketOnSequence, true) }
    }

    /// Timestamps are unsigned: an instant before the process started (none should be) is 0.
    @inline(__always) private static func nanoseconds(_ time: Int64) -> UInt64 { UInt64(max(time, 0)) }

    /// pid and tid are int32 in Perfetto's descriptors (Linux's fit).
    private static func int32(_ value: UInt64) -> Int64 { Int64(Int32(truncatingIfNeeded: value)) }
}
