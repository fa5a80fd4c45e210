/// `export --format folded`: one line per distinct stack, `main;child;leaf VALUE`, VALUE the self
/// time in microseconds of the calls with that stack (flamegraph.pl, inferno, speedscope,
/// Pyroscope). Self time, not total: a flame graph built from inclusive times counts every
/// caller's time again in each of its callees. With several threads, each stack starts with the
/// thread (`thread 4243 "worker"`). Threads in the trace's order; within one, stacks in the order
/// their first call started, a caller before its callees (then by text, for calls that started in
/// the same nanosecond): the order a reader of the program meets them, and one that `export` can
/// also write while it reads (`FoldedExportStream`). Stacks whose self time rounds to 0 us are
/// left out.
///
/// ```
/// main;load_config;parse_section 12110
/// main;load_config 28500
/// ```
public enum FoldedExport: ProfileView {
    public static let command = ViewCommand.export
    public static let format = "folded"
    public static let summary = "folded stacks with self time in microseconds, for flame graphs"

    public static func stream(options: ViewOptions) -> (any ViewStream)? { FoldedExportStream() }

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let threads = profile.threads.filter { $0.count > 0 }
        var lines = FoldedLines(functions: profile.functions, showThreads: threads.count > 1)
        for thread in threads {
            // Stacks as a trie (node 0: the thread), one step a call.
            var trie = CallPathTrie()
            let root = trie.add(function: -1)
            var selfTime: [Int64] = [0]
            var firstStart: [Int64] = [0]
            var path: [Int32] = []
            var depths: [Int] = []
            thread.forEachPreOrder { call, treeDepth in
                while let last = depths.last, last >= treeDepth {
                    depths.removeLast()
                    path.removeLast()
                }
                let here = Int(trie.child(of: path.last ?? root, thread.function[call]))
                let start = thread.start(call).sinceStart.value
                if here == selfTime.count {
                    selfTime.append(0)
                    firstStart.append(start)
                } else {
                    firstStart[here] = min(firstStart[here], start)
                }
                depths.append(treeDepth)
                path.append(Int32(here))
                selfTime[here] &+= thread.selfTime(call).value
            }
            lines.beginThread(tid: thread.tid, name: thread.name)
            for node in 1..<trie.count {
                lines.add(frames: trie.path(to: Int32(node)), selfTime: selfTime[node], firstStart: firstStart[node])
            }
            lines.write(to: output)
        }
    }
}

/// One thread's folded stacks at a time, written in `FoldedExport`'s order: the one writer of the
/// view (from a profile) and of `FoldedExportStream` (while the trace is read).
struct FoldedLines {
    /// Each function's name as a frame: a ';' or a line break would split a frame or a line, so
    /// they become '_'. (Spaces are fine: the value is what follows the last one.)
    private var names: [String] = []
    var showThreads: Bool
    private var threadFrame = ""
    private var stacks: [(firstStart: Int64, depth: Int, text: String, micros: Int64)] = []

    init(functions: [ProfileFunction] = [], showThreads: Bool) {
        self.showThreads = showThreads
        for function in functions { add(function) }
    }

    mutating func add(_ function: ProfileFunction) {
        names.append(String(function.name.map { $0 == ";" || $0 == "\n" ? "_" : $0 }))
    }

    mutating func beginThread(tid: UInt64, name: String) {
        threadFrame = "thread \(tid)" + (name.isEmpty ? "" : " \"\(name)\"")
        stacks.removeAll(keepingCapacity: true)
    }

    /// A distinct stack (functions from the root down), its calls' summed self time in
    /// nanoseconds and their earliest start.
    mutating func add(frames: [Int32], selfTime: Int64, firstStart: Int64) {
        let micros = (selfTime &+ 500) / 1000
        guard micros > 0 else { return }
        let text = frames.map { names[Int($0)] }.joined(separator: ";")
        stacks.append((firstStart, frames.count, text, micros))
    }

    /// The thread's stacks, in order.
    func write(to output: ByteOutput) {
        let ordered = stacks.sorted { ($0.firstStart, $0.depth) < ($1.firstStart, $1.depth)
            || ($0.firstStart, $0.depth) == ($1.firstStart, $1.depth) && $0.text < $1.text }
        for stack in ordered {
            if showThreads {
                output.write(threadFrame)
                output.write(byte: UInt8(ascii: ";"))
            }
            output.write(stack.text)
            output.write(byte: 0x20)
            output.write(UInt64(stack.micros), width: 0)
            output.write(byte: 0x0A)
        }
    }
}
