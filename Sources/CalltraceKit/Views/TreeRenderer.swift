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
///
/// A call that spent much of its time waiting for a CPU (`Preemption.isMarked`) ends in
/// `(preempted X ms)`. A call left out (under `minimumCost`, or `hidePreempted`) leaves its shown
/// descendants in place under its nearest shown ancestor, one level of indentation below it.
public struct TreeRenderer {
    public let trace: Trace
    public let symbolicator: Symbolicator
    /// Calls shorter than this are left out (their longer descendants, if any, still show).
    public var minimumCost: Nanoseconds
    /// Show measured durations (hooks included) instead of costs (`report --raw`).
    public var measured: Bool
    /// Leave out calls that reached the threshold (the recorded one, or `minimumCost` when higher)
    /// only because their thread waited for a CPU.
    public var hidePreempted = false
    public var preemption: Preemption

    public init(trace: Trace, symbolicator: Symbolicator, minimumCost: Nanoseconds = .zero, measured: Bool = false) {
        self.trace = trace
        self.symbolicator = symbolicator
        self.minimumCost = minimumCost
        self.measured = measured
        self.preemption = Preemption(trace: trace)
    }

    public func render(to output: inout some TextOutputStream) {
        var text = ""
        let bytes = ByteOutput { text += String(decoding: $0, as: UTF8.self) }
        render(to: bytes)
        bytes.flush()
        output.write(text)
    }

    /// The whole output as one string (for tests and small traces).
    public func render() -> String {
        var text = ""
        render(to: &text)
        return text
    }

    /// The fast path, for big traces: every thread's tree, written as bytes.
    public func render(to output: ByteOutput) {
        let threads = trace.threads.filter { !trace.records(ofStream: $0.stream).isEmpty }
        let names = NameCache(symbolicator: symbolicator)
        if let line = TreeRenderer.mutedLine(trace), !threads.isEmpty { output.write(line + "\n") }
        for (position, thread) in threads.enumerated() {
            if threads.count > 1 {
                if position > 0 { output.write(byte: 0x0A) }
                output.write(TreeRenderer.heading(thread) + "\n")
            }
            render(CallTreeBuilder.build(trace: trace, stream: thread.stream), to: output, names: names)
        }
    }

    private func render(_ tree: CallTree, to output: ByteOutput, names: NameCache) {
        let clock = trace.clock
        let minimum = minimumCost
        let measured = measured
        let filter = PreemptionFilter(trace: trace, preemption: preemption, hide: hidePreempted, minimumCost: minimum)
        // The tree depths of the shown ancestors of the call being visited: its indentation.
        var shownAbove: [Int] = []
        tree.records.withUnsafeBufferPointer { records in
            tree.forEachNodeFast(records: records) { record, treeDepth in
                while let last = shownAbove.last, last >= treeDepth { shownAbove.removeLast() }
                let cost = clock.duration(ticks: record.ticks(measured: measured))
                guard cost >= minimum, let preempted = filter.preempted(record, cost: cost) else { return }
                let indent = shownAbove.count
                shownAbove.append(treeDepth)
                let name = names.name(of: record)
                var suffix = record.isUnfinished ? TreeRenderer.unfinished : record.isUnwound ? TreeRenderer.unwound : nil
                if Preemption.isMarked(cost: cost, preempted: preempted) {
                    suffix = (suffix ?? []) + TreeRenderer.preemptedSuffix(preempted)
                }
                // Hundredths of a millisecond, rounded half up: "%7.2f".
                let hundredths = (UInt64(max(cost.value, 0)) + 5_000) / 10_000
                let length = 64 + 2 * indent + name.count + (suffix?.count ?? 0)
                if let line = output.reserve(length) {
                    output.commit(TreeRenderer.formatLine(into: line, depth: record.depth, hundredths: hundredths,
                                                          indent: indent, name: name, suffix: suffix))
                } else { // a line longer than the buffer (a very deep tree): the slow way
                    output.write(UInt64(record.depth), width: 2)
                    output.write(byte: UInt8(ascii: "|"))
                    output.write(fixed: hundredths, decimals: 2, width: 7)
                    output.write(TreeRenderer.msBar)
                    output.write(spaces: 2 * indent)
                    output.write(name)
                    if let suffix { output.write(suffix) }
                    output.write(byte: 0x0A)
                }
            }
        }
    }

    /// One line, `%2u|%7.2f ms|<indent>name<suffix>\n`, written at `line`; returns its length.
    @inline(__always)
    private static func formatLine(into line: UnsafeMutablePointer<UInt8>, depth: UInt32, hundredths: UInt64,
                                   indent: Int, name: UnsafeBufferPointer<UInt8>, suffix: [UInt8]?) -> Int {
        var n = ByteOutput.format(fixed: UInt64(depth), decimals: 0, width: 2, at: line)
        line[n] = UInt8(ascii: "|")
        n += 1
        n += ByteOutput.format(fixed: hundredths, decimals: 2, width: 7, at: line + n)
        line[n] = 0x20; line[n + 1] = UInt8(ascii: "m"); line[n + 2] = UInt8(ascii: "s"); line[n + 3] = UInt8(ascii: "|")
        n += 4
        (line + n).initialize(repeating: 0x20, count: 2 * indent)
        n += 2 * indent
        if let base = name.baseAddress { (line + n).update(from: base, count: name.count) }
        n += name.count
        if let suffix {
            for byte in suffix { line[n] = byte; n += 1 }
        }
        line[n] = 0x0A
        return n + 1
    }

    private static let msBar = Array(" ms|".utf8)
    private static let unfinished = Array(" (unfinished)".utf8)
    private static let unwound = Array(" (unwound)".utf8)

    /// The header line when the runtime muted functions (adaptive muting); nil when it muted none.
    public static func mutedLine(_ trace: Trace) -> String? {
        let count = max(trace.muted.count, Int(trace.header.mutedCount))
        guard count > 0 else { return nil }
        return "\(count) function\(count == 1 ? "" : "s") muted after running often and fast; their time is in their callers"
    }

    static func preemptedSuffix(_ preempted: Nanoseconds) -> [UInt8] {
        Array(" (preempted \(TextFormat.milliseconds(preempted)) ms)".utf8)
    }

    public static func heading(_ thread: ThreadInfo) -> String {
        let name = thread.name.isEmpty ? "" : " \"\(thread.name)\""
        return "== thread \(thread.tid)\(name) =="
    }
}
