/// `export --format pprof`: a gzipped `profile.proto` (github.com/google/pprof, proto/profile.proto),
/// what `go tool pprof`, Pyroscope, Grafana, Parca and OpenTelemetry's profiles read.
///
/// - Sample types `calls/count` and `self/nanoseconds` (the default): pprof derives cumulative time
///   by summing a sample's value up its stack, so a sample holding a call's total would count it
///   again in every caller. One sample per distinct call path (leaf first, as pprof wants), with
///   the calls and the self time of every call on that path; a thread's paths start at its root calls.
/// - One location and one function per traced function (name, file, start line: the line that names
///   it), one mapping per module (its path and build id; addresses are not kept: the trace's names
///   and lines are the symbols, `has_functions` and `has_filenames` say so).
/// - `time_nanos` is the trace's start (unix), `duration_nanos` from there to its end.
public enum PprofExport: ProfileView {
    public static let command = ViewCommand.export
    public static let format = "pprof"
    public static let summary = "pprof's profile.proto, gzipped (go tool pprof, Pyroscope, Grafana, Parca)"
    public static let needsLines = true
    public static let isBinary = true

    // profile.proto field numbers.
    private enum P { static let sampleType = 1, sample = 2, mapping = 3, location = 4, function = 5, stringTable = 6,
                     timeNanos = 9, durationNanos = 10, periodType = 11, period = 12, defaultSampleType = 14 }

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        var strings = StringTable()
        // Call paths as a trie (node 0: above every thread's roots); each node's calls and self time.
        var trie = CallPathTrie()
        let root = trie.add(function: -1)
        var calls: [Int64] = [0], selfTime: [Int64] = [0]
        for thread in profile.threads where thread.count > 0 {
            var path: [Int32] = []  // the open calls' nodes
            thread.forEachPreOrder({ call, _ in
                let here = trie.child(of: path.last ?? root, thread.function[call])
                if Int(here) == calls.count {
                    calls.append(0)
                    selfTime.append(0)
                }
                calls[Int(here)] += 1
                path.append(here)
            }, closing: { _, time in
                selfTime[Int(path.removeLast())] &+= time.value
            })
        }
        let writer = ProtobufWriter()
        var bytes: [UInt8] = []
        let collect = ByteOutput { bytes += $0 }
        func valueType(_ field: Int, _ type: String, _ unit: String) {
            writer.message(field) {
                writer.int(1, strings.index(type))
                writer.int(2, strings.index(unit))
            }
        }
        valueType(P.sampleType, "calls", "count")
        valueType(P.sampleType, "self", "nanoseconds")
        for node in 1..<trie.count {
            writer.message(P.sample) {
                // Leaf first; location ids are function index + 1.
                for function in trie.path(to: Int32(node)).reversed() { writer.uint(1, UInt64(function) + 1) }
                writer.int(2, calls[node])
                writer.int(2, selfTime[node])
            }
            writer.drain(to: collect)
        }
        // Mappings: one per module, numbered in first-seen order.
        var mappingOf: [String: UInt64] = [:]
        for f in profile.functions {
            guard let module = f.module, mappingOf[module] == nil else { continue }
            let id = UInt64(mappingOf.count + 1)
            mappingOf[module] = id
            writer.message(P.mapping) {
                writer.uint(1, id)
                writer.int(5, strings.index(module))
                if let buildID = f.buildID { writer.int(6, strings.index(buildID)) }
                writer.bool(7, true)
                writer.bool(8, profile.functions.contains { $0.module == module && $0.file != nil })
                writer.bool(9, profile.functions.contains { $0.module == module && $0.line != nil })
            }
            writer.drain(to: collect)
        }
        for (index, f) in profile.functions.enumerated() {
            let id = UInt64(index + 1)
            writer.message(P.location) {
                writer.uint(1, id)
                if let module = f.module, let mapping = mappingOf[module] { writer.uint(2, mapping) }
                writer.message(4) {
                    writer.uint(1, id)
                    if let line = f.line { writer.int(2, Int64(line)) }
                }
            }
            writer.message(P.function) {
                writer.uint(1, id)
                writer.int(2, strings.index(f.name))
                writer.int(3, strings.index(f.name))
                if let file = f.file { writer.int(4, strings.index(file)) }
                if let line = f.line { writer.int(5, Int64(line)) }
            }
            writer.drain(to: collect)
        }
        writer.int(P.timeNanos, profile.unixTimeAtStart.value)
        if let ended = profile.ended { writer.int(P.durationNanos, ended.sinceStart.value) }
        valueType(P.periodType, "calls", "count")
        writer.int(P.period, 1)
        writer.int(P.defaultSampleType, strings.index("self"))
        for text in strings.texts { writer.string(P.stringTable, text) }  // last: every index is known
        writer.drain(to: collect)
        collect.flush()
        output.write(Gzip.wrap(bytes))
    }

    /// profile.proto's string table: index 0 is the empty string.
    private struct StringTable {
        private(set) var texts = [""]
        private var indexOf = ["": Int64(0)]

        mutating func index(_ text: String) -> Int64 {
            if let known = indexOf[text] { return known }
            let new = Int64(texts.count)
            texts.append(text)
            indexOf[text] = new
            return new
        }
    }
}
