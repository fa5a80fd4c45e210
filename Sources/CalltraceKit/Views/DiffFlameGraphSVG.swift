/// `calltrace flame --diff BASE NEW`: a differential flame graph, one self-contained SVG. The shape
/// is NEW's (every thread of a run merged under the program, widths the mean inclusive time per
/// run); each frame is coloured by the change of its self time per run against the same stack in
/// BASE (`DiffFlameGraph`): red slower, blue faster, deeper for a larger change, grey unchanged or
/// not significant (a Mann-Whitney U test with several runs a side, else `diff`'s noise share and
/// floor). Each frame's tooltip gives both self times, both totals, the change and its p-value.
/// The outermost stacks that only BASE had are listed under the graph. Zoom and search as `FlameGraphSVG`.
public enum DiffFlameGraphSVG: ProfileView {
    public static let command = ViewCommand.flame
    public static let format = "diff"
    public static let flag: String? = "--diff"
    public static let summary = "flame --diff: NEW's flame graph coloured by the change of self time against BASE"

    typealias F = FlameGraphSVG

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        let graph = input.diffFlameGraph ?? DiffFlameGraph(base: input.baseline, new: input.profiles)
        let whole = graph.meanNewTotal(0)
        let frames = graph.layout(minimumTime: whole * F.minimumShare)
        let rows = Int(frames.reduce(0) { max($0, graph.depth[$1.node]) }) + 1
        // The outermost stacks only BASE had (their callers NEW has), largest first.
        let gone = (1..<max(graph.count, 1)).filter {
            graph.meanNewTotal($0) == 0 && graph.meanBaseTotal($0) > 0
                && (graph.parent[$0] == 0 || graph.meanNewTotal(Int(graph.parent[$0])) > 0)
        }.sorted { graph.meanBaseTotal($0) > graph.meanBaseTotal($1) }
        let listed = Array(gone.prefix(20))
        let listTop = F.headerHeight + rows * F.rowHeight + F.graphGap
        let height = listTop + (listed.isEmpty ? 0 : (listed.count + 1 + (gone.count > listed.count ? 1 : 0)) * F.rowHeight) + F.margin
        let program = graph.newProgram ?? graph.baseProgram ?? "nothing"

        let runs = "\(graph.baseRuns) base run\(graph.baseRuns == 1 ? "" : "s"), \(graph.newRuns) new run\(graph.newRuns == 1 ? "" : "s")"
        let tested = graph.baseRuns >= 2 && graph.newRuns >= 2 && MannWhitneyU.smallestPValue(graph.baseRuns, graph.newRuns) < options.alpha
        let rule = tested ? "Mann-Whitney U test, p < \(DiffTextView.number(options.alpha))"
            : "over \(TextFormat.fixed(Int64((options.noiseShare * 1000).rounded()), scale: 1, decimals: 1))%"
        F.writeHeader(height: height, title: "\(program): change of self time per run, \(runs)",
                      subtitle: "NEW's shape (width: mean inclusive time per run); red slower, blue faster, grey unchanged "
                          + "(\(rule) and over \(TextFormat.milliseconds(options.noiseFloor)) ms); click a frame to zoom",
                      to: output)
        output.write(static: "<g class=\"graph\">\n")
        let scale = whole > 0 ? Double(F.graphWidth * 100) / whole : 0
        for frame in frames {
            let node = frame.node
            let name = node == 0 ? program : graph.key(node).name
            let (change, p) = graph.change(node, noiseShare: options.noiseShare, noiseFloor: options.noiseFloor, alpha: options.alpha)
            let before = graph.meanBaseSelf(node), after = graph.meanNewSelf(node)
            let left = F.margin * 100 + Int((max(frame.start, 0) * scale).rounded())
            let right = max(F.margin * 100 + Int((max(frame.end, 0) * scale).rounded()), left)
            let y = F.headerHeight + (rows - 1 - Int(graph.depth[node])) * F.rowHeight
            var title = name + "\nself per run: base \(ms(before)) ms, new \(ms(after)) ms, change "
                + DiffTextView.signed(Nanoseconds(Int64((after - before).rounded())))
            if before > 0 { title += " ms (" + DiffTextView.percent(Int64(((after - before) / before * 1000).rounded())) + ")" } else { title += " ms" }
            if let p { title += ", p = " + DiffTextView.pValue(p) }
            title += change == .unchanged ? " (unchanged)" : change == .slower ? " (slower)" : " (faster)"
            title += "\ntotal per run: base \(ms(graph.meanBaseTotal(node))) ms, new \(ms(graph.meanNewTotal(node))) ms"
            F.writeFrame(name: name, tooltip: title.split(separator: "\n", omittingEmptySubsequences: false).map(String.init),
                         left: left, right: right, y: y, fill: colour(change, before: before, after: after), to: output)
        }
        output.write(static: "</g>\n")
        if !listed.isEmpty {
            var y = listTop + F.rowHeight - 4
            output.write("<text x=\"\(F.margin)\" y=\"\(y)\">only in BASE (inclusive time per run):</text>\n")
            for node in listed {
                y += F.rowHeight
                output.write("<text x=\"\(F.margin)\" y=\"\(y)\">")
                output.write(F.escaped("  " + graph.stack(node).joined(separator: ";") + " " + ms(graph.meanBaseTotal(node)) + " ms"))
                output.write(static: "</text>\n")
            }
            if gone.count > listed.count {
                output.write("<text x=\"\(F.margin)\" y=\"\(y + F.rowHeight)\">  and \(gone.count - listed.count) more</text>\n")
            }
        }
        output.write(F.script)
        output.write(static: "</svg>\n")
    }

    private static func ms(_ nanoseconds: Double) -> String {
        TextFormat.milliseconds(Nanoseconds(Int64(nanoseconds.rounded())))
    }

    /// Red for slower, blue for faster, the deeper the larger the change against the base (a frame
    /// new in NEW counts as doubled); grey when unchanged.
    static func colour(_ change: DiffFlameGraph.Change, before: Double, after: Double) -> String {
        let ratio = before > 0 ? min(abs(after - before) / before, 1) : 1
        let fade = Int((200 - 150 * ratio).rounded())
        switch change {
        case .unchanged: return "rgb(205,205,205)"
        case .slower: return "rgb(245,\(fade),\(fade))"
        case .faster: return "rgb(\(fade),\(fade),245)"
        }
    }
}
