/// The call tree as text, one line per recorded call (the MTHawkeye layout):
///
/// ```
///  0| 121.40 ms|main
///  1|  40.61 ms|  load_config
///  2|  12.11 ms|    parse_section
/// ```
///
/// The first column is the call's depth on its thread's stack as recorded; the indentation is
/// its depth in the tree. They differ only when a call's parent was not recorded (dropped, or
/// nested deeper than `--max-depth`): the call then sits under its nearest recorded ancestor.
/// With more than one thread with calls, each thread's tree follows a `== thread TID "name" ==`
/// heading, the main thread first.
public struct TreeRenderer {
    public let trace: Trace
    public let symbolicator: Symbolicator
    /// Calls shorter than this are left out (their longer descendants, if any, still show).
    public var minimumCost: Nanoseconds

    public init(trace: Trace, symbolicator: Symbolicator, minimumCost: Nanoseconds = .zero) {
        self.trace = trace
        self.symbolicator = symbolicator
        self.minimumCost = minimumCost
    }

    public func render(to output: inout some TextOutputStream) {
        let threads = trace.threads.filter { !trace.records(ofStream: $0.stream).isEmpty }
        for (position, thread) in threads.enumerated() {
            if threads.count > 1 {
                if position > 0 { output.write("\n") }
                output.write(TreeRenderer.heading(thread) + "\n")
            }
            render(CallTreeBuilder.build(trace: trace, stream: thread.stream), to: &output)
        }
    }

    /// The whole output as one string (for tests and small traces).
    public func render() -> String {
        var text = ""
        render(to: &text)
        return text
    }

    public func render(_ tree: CallTree, to output: inout some TextOutputStream) {
        var indents: [String] = []
        tree.forEachNode { node, treeDepth in
            let record = tree.record(node)
            let cost = trace.clock.duration(ticks: record.durationTicks)
            guard cost >= minimumCost else { return }
            while indents.count <= treeDepth { indents.append(String(repeating: "  ", count: indents.count)) }
            write(record, cost: cost, indent: indents[treeDepth], to: &output)
        }
    }

    /// Writes the line in pieces: building one string per line is most of the time for big trees.
    func write(_ record: CallRecord, cost: Nanoseconds, indent: String, to output: inout some TextOutputStream) {
        output.write(TextFormat.padded(String(record.depth), width: 2))
        output.write("|")
        output.write(TextFormat.padded(TextFormat.milliseconds(cost), width: 7))
        output.write(" ms|")
        output.write(indent)
        output.write(symbolicator.symbolicate(record.function, atTick: record.endTick).name)
        if record.isUnfinished { output.write(" (unfinished)") }
        if record.isUnwound { output.write(" (unwound)") }
        output.write("\n")
    }

    public static func heading(_ thread: ThreadInfo) -> String {
        let name = thread.name.isEmpty ? "" : " \"\(thread.name)\""
        return "== thread \(thread.tid)\(name) =="
    }
}
