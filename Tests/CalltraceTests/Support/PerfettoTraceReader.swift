import Foundation
import XCTest

/// A Perfetto protobuf trace read back with the official definitions (PyPI's `perfetto` package,
/// its perfetto_trace_pb2), the way trace_processor reads it: track descriptors, interned names
/// per packet sequence, slices rebuilt from their begin and end events on each track. What a
/// writer can get wrong is listed in `problems`: a packet without a sequence id, a sequence not
/// starting with cleared incremental state, an interned id used before it was sent or in a
/// packet that does not say it needs incremental state, an event on an undeclared track, time
/// going back on a sequence, an end without a begin, a slice left open.
struct PerfettoTraceSummary: Decodable {
    struct Track: Decodable {
        var uuid: UInt64
        var parent: UInt64?
        var name: String
        var pid: Int?
        var tid: Int?
        var processName: String?
        var threadName: String?
        var cmdline: [String]?
    }

    struct Source: Decodable, Equatable {
        var file: String
        var function: String
        var line: Int?
    }

    struct Slice: Decodable {
        var track: UInt64
        var name: String
        var start: UInt64
        var end: UInt64
        /// Depth on its track (0 = outermost).
        var depth: Int
        var args: [String: Arg]
        var source: Source?
    }

    struct Instant: Decodable {
        var track: UInt64
        var name: String
        var at: UInt64
        var args: [String: Arg]
    }

    enum Arg: Decodable, Equatable {
        case bool(Bool), int(Int64), string(String), array([String])

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Bool.self) { self = .bool(value) }
            else if let value = try? container.decode(Int64.self) { self = .int(value) }
            else if let value = try? container.decode(String.self) { self = .string(value) }
            else { self = .array(try container.decode([String].self)) }
        }
    }

    var problems: [String]
    var packets: Int
    var sequences: Int
    var tracks: [Track]
    /// In the order they began.
    var slices: [Slice]
    var instants: [Instant]

    func track(_ uuid: UInt64) -> Track? { tracks.first { $0.uuid == uuid } }
    func threadTrack(tid: Int) -> Track? { tracks.first { $0.tid == tid } }
    func track(named name: String) -> Track? { tracks.first { $0.name == name } }
    func slices(on track: Track?) -> [Slice] { slices.filter { $0.track == track?.uuid } }
    func instants(on track: Track?) -> [Instant] { instants.filter { $0.track == track?.uuid } }

    /// Reads the trace at `url` with a throwaway venv's `perfetto` and `protobuf`.
    static func read(_ url: URL, file: StaticString = #filePath, line: UInt = #line) throws -> PerfettoTraceSummary {
        let result = try PythonVenv.run(script, arguments: [url.path], packages: ["perfetto", "protobuf"],
                                        file: file, line: line)
        guard result.status == 0 else {
            XCTFail("reading the Perfetto trace failed:\n\(result)", file: file, line: line)
            throw PythonVenvError("reading the Perfetto trace failed")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(PerfettoTraceSummary.self, from: Data(result.stdout.utf8))
    }

    private static let script = #"""
        import json, sys
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

        data = open(sys.argv[1], "rb").read()
        trace = pb.Trace()
        trace.ParseFromString(data)
        CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        NEEDS = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
        problems, tracks, slices, instants = [], {}, [], []
        interned = {}      # sequence -> {"names", "annotations", "locations"}
        last_time = {}     # sequence -> last timestamp
        open_slices = {}   # track -> stack of slices

        def annotation_value(a):
            kind = a.WhichOneof("value")
            if kind == "bool_value": return a.bool_value
            if kind == "uint_value": return a.uint_value
            if kind == "int_value": return a.int_value
            if kind == "string_value": return a.string_value
            if kind == "double_value": return a.double_value
            if a.array_values: return [v.string_value for v in a.array_values]
            return None

        for index, p in enumerate(trace.packet):
            where = "packet %d" % index
            seq = p.trusted_packet_sequence_id
            if seq == 0:
                problems.append(where + ": no trusted_packet_sequence_id")
            if seq not in interned:
                interned[seq] = {"names": {}, "annotations": {}, "locations": {}}
                if not p.sequence_flags & CLEARED:
                    problems.append(where + ": the first packet of sequence %d does not clear the incremental state" % seq)
            elif p.sequence_flags & CLEARED:
                problems.append(where + ": sequence %d clears its incremental state again" % seq)
            state = interned[seq]
            if p.HasField("interned_data"):
                if not p.sequence_flags & NEEDS:
                    problems.append(where + ": interned data in a packet without SEQ_NEEDS_INCREMENTAL_STATE")
                for n in p.interned_data.event_names: state["names"][n.iid] = n.name
                for n in p.interned_data.debug_annotation_names: state["annotations"][n.iid] = n.name
                for l in p.interned_data.source_locations:
                    state["locations"][l.iid] = {"file": l.file_name, "function": l.function_name,
                                                 "line": l.line_number if l.HasField("line_number") else None}
            if p.HasField("track_descriptor"):
                d = p.track_descriptor
                t = {"uuid": d.uuid, "parent": d.parent_uuid if d.HasField("parent_uuid") else None, "name": d.name}
                if d.HasField("process"):
                    t.update(pid=d.process.pid, process_name=d.process.process_name, cmdline=list(d.process.cmdline))
                if d.HasField("thread"):
                    t.update(pid=d.thread.pid, tid=d.thread.tid, thread_name=d.thread.thread_name)
                if d.uuid in tracks: problems.append(where + ": track %d declared twice" % d.uuid)
                tracks[d.uuid] = t
            if not p.HasField("track_event"):
                continue
            e = p.track_event
            if not p.HasField("timestamp"):
                problems.append(where + ": an event without a timestamp")
            ts = p.timestamp
            if ts < last_time.get(seq, 0):
                problems.append(where + ": time goes back on sequence %d (%d after %d)" % (seq, ts, last_time[seq]))
            last_time[seq] = ts
            if e.track_uuid not in tracks:
                problems.append(where + ": track %d is not declared before its events" % e.track_uuid)
            uses_interning = e.HasField("name_iid") or e.HasField("source_location_iid") or any(
                a.HasField("name_iid") for a in e.debug_annotations)
            if uses_interning and not p.sequence_flags & NEEDS:
                problems.append(where + ": uses interned data without SEQ_NEEDS_INCREMENTAL_STATE")
            name = None
            if e.HasField("name"): name = e.name
            elif e.HasField("name_iid"):
                name = state["names"].get(e.name_iid)
                if name is None: problems.append(where + ": name_iid %d was not interned" % e.name_iid)
            args = {}
            for a in e.debug_annotations:
                key = a.name if a.HasField("name") else state["annotations"].get(a.name_iid)
                if key is None: problems.append(where + ": annotation name_iid %d was not interned" % a.name_iid)
                args[key or "?"] = annotation_value(a)
            source = None
            if e.HasField("source_location_iid"):
                source = state["locations"].get(e.source_location_iid)
                if source is None: problems.append(where + ": source_location_iid %d was not interned" % e.source_location_iid)
            stack = open_slices.setdefault(e.track_uuid, [])
            if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                s = {"track": e.track_uuid, "name": name or "?", "start": ts, "end": None, "depth": len(stack),
                     "args": args, "source": source}
                stack.append(s)
                slices.append(s)
            elif e.type == pb.TrackEvent.TYPE_SLICE_END:
                if not stack:
                    problems.append(where + ": an end without a begin on track %d" % e.track_uuid)
                    continue
                s = stack.pop()
                s["end"] = ts
                if ts < s["start"]: problems.append(where + ": %s ends before it starts" % s["name"])
            elif e.type == pb.TrackEvent.TYPE_INSTANT:
                instants.append({"track": e.track_uuid, "name": name or "?", "at": ts, "args": args})
            else:
                problems.append(where + ": event type %d" % e.type)
        for track, stack in open_slices.items():
            for s in stack: problems.append("%s on track %d never ends" % (s["name"], track))
        slices = [s for s in slices if s["end"] is not None]
        json.dump({"problems": problems, "packets": len(trace.packet), "sequences": len(interned),
                   "tracks": list(tracks.values()), "slices": slices, "instants": instants}, sys.stdout)
        """#
}
