/// `export --format folded`: one line per distinct stack, `main;child;leaf VALUE`, VALUE the self
/// time in microseconds of the calls with that stack (flamegraph.pl, inferno, speedscope,
/// Pyroscope). Self time, not total: a flame graph built from inclusive times counts every
/// caller's time again in each of its callees. With several threads, each stack starts with the
/// thread (`thread 4243 "worker"`). Stacks in first-seen order; stacks whose self time rounds to
/// 0 us are left out.
///
/// ```
/// main;load_config;parse_section 12110
/// main;load_config 28500
/// ```
public enum FoldedExport: ProfileView {
    public static let command = ViewCommand.export
    public static let format = "folded"
    public static let summary = "folded stacks with self time in microseconds, for flame graphs"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let threads = profile.threads.filter { $0.count > 0 }
        // A ';' or a line break in a name would split a frame or a line: it becomes '_'. (Spaces
        // are fine: the value is what follows the last one.)
        let names = profile.functions.map { $0.name.map { $0 == ";" || $0 == "\n" ? "_" : $0 } }.map { String($0) }
        // Stacks as a trie: node = (parent node, function), made in first-seen order; one lookup a call.
        var nodeOf: [UInt64: Int32] = [:]
        var parent: [Int32] = []
        var label: [String] = []
        var selfTime: [Int64] = []
        func node(_ up: Int32, _ name: String, key: UInt64) -> Int32 {
            if let known = nodeOf[key] { return known }
            let new = Int32(parent.count)
            parent.append(up)
            label.append(name)
            selfTime.append(0)
            nodeOf[key] = new
            return new
        }
        for (index, thread) in threads.enumerated() {
            // Each thread's stacks hang under a node of its own (labelled only when several show).
            let root = node(-1, "thread \(thread.tid)" + (thread.name.isEmpty ? "" : " \"\(thread.name)\""),
                            key: UInt64(UInt32.max) << 32 | UInt64(index))
            var path: [Int32] = []
            var depths: [Int] = []
            thread.forEachPreOrder { call, treeDepth in
                while let last = depths.last, last >= treeDepth {
                    depths.removeLast()
                    path.removeLast()
                }
                let up = path.last ?? root
                let function = Int(thread.function[call])
                let here = node(up, names[function], key: UInt64(UInt32(bitPattern: up)) << 32 | UInt64(function))
                depths.append(treeDepth)
                path.append(here)
                selfTime[Int(here)] &+= thread.selfTime(call).value
            }
        }
        let showThreads = threads.count > 1
        for here in selfTime.indices where parent[here] >= 0 {
            let micros = (selfTime[here] &+ 500) / 1000
            guard micros > 0 else { continue }
            var frames: [String] = []
            var at = Int32(here)
            while at >= 0 {
                if parent[Int(at)] >= 0 || showThreads { frames.append(label[Int(at)]) }
                at = parent[Int(at)]
            }
            output.write(frames.reversed().joined(separator: ";"))
            output.write(byte: 0x20)
            output.write(UInt64(micros), width: 0)
            output.write(byte: 0x0A)
        }
    }
}
