/// `calltrace flame`: a self-contained SVG flame graph. Each thread's calls are merged by stack
/// (`FlameGraph`); a frame is as wide as the inclusive time of its merged calls, so the gap above
/// a frame is its self time. Main thread first, each thread its own graph below the previous one,
/// its bottom frame the thread, all on one scale (the busiest thread spans the width). Siblings in
/// name order; frames narrower than 0.1% of the width are left out (the subtitle says how many).
/// Names that fit are drawn inside, cut with `..` by an estimated character width; each frame's
/// `<title>` (its tooltip) has the full name, the cost, its share of the thread, the self time,
/// how many calls it merges and file:line when known.
/// Colours are a hash of the function's name (the same function has the same colour in every
/// picture). All geometry is in the static SVG; the embedded script only changes it: a click on a
/// frame zooms to it (its ancestors span the width, frames beside it hide), a click on the
/// background or on "Reset zoom" goes back; "Search" (shown by the script) colours the frames
/// whose names match a regular expression purple.
///
/// ```
/// <g class="f"><title>load_config
/// 41.453 ms (36.93%), self 17.224 ms
/// 1 call
/// Scripts/demo/demo.c:25</title><rect x="273.85" y="76" width="435.82" height="15" rx="2" fill="rgb(211,200,32)"/><text x="276.85" y="87">load_config</text></g>
/// ```
public enum FlameGraphSVG: ProfileView {
    public static let command = ViewCommand.flame
    public static let format = "svg"
    public static let summary = "a self-contained SVG flame graph: width by inclusive time, click to zoom"
    public static let needsLines = true

    /// The picture, in pixels: frames span `graphWidth` between margins.
    static let imageWidth = 1200
    static let margin = 10
    static let graphWidth = imageWidth - 2 * margin
    static let rowHeight = 16
    static let frameHeight = 15
    static let headerHeight = 60
    static let graphGap = 16
    /// The frames' font (monospace, so that the width estimate holds) and its advance.
    static let fontSize = 11
    static let characterWidth = 6.7
    /// Narrower frames are left out.
    static let minimumShare = 0.001

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let threads = profile.threads.filter { $0.count > 0 }
        let rank = FlameGraph.ranks(of: profile.functions)
        let graphs = threads.map { FlameGraph($0, rank: rank) }
        // One scale for every thread: the busiest spans the width.
        let widest = graphs.reduce(Int64(0)) { max($0, $1.total[0]) }
        let layouts = graphs.map { $0.layout(minimumTime: Double(widest) * minimumShare) }
        let rows = zip(graphs, layouts).map { graph, layout in
            Int(layout.frames.reduce(0) { max($0, graph.depth[$1.node]) }) + 1
        }
        let omitted = layouts.reduce(0) { $0 + $1.omitted }
        var height = headerHeight + rows.reduce(0) { $0 + $1 * rowHeight } + max(rows.count - 1, 0) * graphGap + margin
        if threads.isEmpty { height = headerHeight + 2 * rowHeight }

        let title = Self.title(profile, threads: threads)
        var subtitle = "width: inclusive time, the gap above a frame its self time; calls with the same stack merged; "
        subtitle += omitted == 1 ? "1 frame" : "\(omitted) frames"
        subtitle += " narrower than 0.1% left out; click a frame to zoom"
        writeHeader(height: height, title: title, subtitle: subtitle, to: output)
        if threads.isEmpty {
            output.write("<text x=\"\(imageWidth / 2)\" y=\"\(headerHeight + rowHeight)\" text-anchor=\"middle\">no calls recorded</text>\n")
        }

        var top = headerHeight
        for (index, thread) in threads.enumerated() {
            output.write(static: "<g class=\"graph\">\n")
            writeGraph(graphs[index], frames: layouts[index].frames, rows: rows[index], top: top, widest: widest,
                       thread: thread, profile: profile, to: output)
            output.write(static: "</g>\n")
            top += rows[index] * rowHeight + graphGap
        }
        output.write(script)
        output.write(static: "</svg>\n")
    }

    /// The program, how long it ran (process start to exit; when the trace has no exit, to the end
    /// of its last recorded call), the threads drawn and the recording threshold. Not the threads'
    /// times added up: a thread that waited all run long would add the run's length again.
    static func title(_ profile: Profile, threads: [ProfileThread]) -> String {
        let ms = { (time: Nanoseconds) in TextFormat.milliseconds(time, decimals: 3) }
        var title = "\(profile.programName): "
        if let ended = profile.ended {
            title += "ran \(ms(ended.sinceStart)) ms"
        } else {
            let ends = threads.lazy.flatMap { thread in thread.roots.lazy.map { thread.end(Int($0), measured: profile.measured) } }
            let last = ends.max() ?? .start
            title += "\(ms(last.sinceStart)) ms to its last recorded call"
        }
        title += ", \(threads.count) thread\(threads.count == 1 ? "" : "s") shown"
        return title + ", recorded with threshold \(Threshold.format(profile.threshold))"
    }

    /// The SVG's start, style, background, title, subtitle and the script's controls (hidden until
    /// it runs); shared with `DiffFlameGraphSVG`.
    static func writeHeader(height: Int, title: String, subtitle: String, to output: ByteOutput) {
        output.write(static: "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n")
        output.write("<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(imageWidth)\" height=\"\(height)\" "
                     + "viewBox=\"0 0 \(imageWidth) \(height)\">\n")
        output.write("""
            <style>
            text{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:\(fontSize)px;fill:#000}
            #title{font-family:Verdana,"DejaVu Sans",sans-serif;font-size:17px}
            #subtitle{font-family:Verdana,"DejaVu Sans",sans-serif;font-size:12px;fill:#555}
            #reset,#search{font-family:Verdana,"DejaVu Sans",sans-serif;font-size:12px;fill:#06c;cursor:pointer}
            g.f{cursor:pointer}
            g.f:hover rect{stroke:#222;stroke-width:1}
            </style>
            <rect id="background" x="0" y="0" width="\(imageWidth)" height="\(height)" fill="#f8f8f4"/>

            """)
        output.write("<text id=\"title\" x=\"\(imageWidth / 2)\" y=\"24\" text-anchor=\"middle\">")
        output.write(escaped(title))
        output.write("</text>\n<text id=\"subtitle\" x=\"\(imageWidth / 2)\" y=\"44\" text-anchor=\"middle\">")
        output.write(escaped(subtitle))
        output.write(static: "</text>\n<text id=\"reset\" x=\"10\" y=\"24\" style=\"display:none\">Reset zoom</text>\n")
        output.write("<text id=\"search\" x=\"\(imageWidth - margin)\" y=\"24\" text-anchor=\"end\" style=\"display:none\">Search</text>\n")
    }

    /// One frame: its rectangle from `left` to `right` (hundredths of a pixel) on the row at `y`,
    /// its label `name` cut to fit, and its tooltip's lines (the first is the name the script
    /// searches); shared with `DiffFlameGraphSVG`.
    static func writeFrame(name: String, tooltip: [String], left: Int, right: Int, y: Int, fill: String,
                           to output: ByteOutput) {
        output.write(static: "<g class=\"f\"><title>")
        for (index, line) in tooltip.enumerated() {
            if index > 0 { output.write(byte: 0x0A) }
            output.write(escaped(line))
        }
        output.write(static: "</title><rect x=\"")
        output.write(fixed: UInt64(left), decimals: 2, width: 0)
        output.write(static: "\" y=\"")
        output.writeInteger(y)
        output.write(static: "\" width=\"")
        output.write(fixed: UInt64(right - left), decimals: 2, width: 0)
        output.write(static: "\" height=\"")
        output.writeInteger(frameHeight)
        output.write(static: "\" rx=\"2\" fill=\"")
        output.write(fill)
        output.write(static: "\"/><text x=\"")
        output.write(fixed: UInt64(left + 300), decimals: 2, width: 0)
        output.write(static: "\" y=\"")
        output.writeInteger(y + frameHeight - 4)
        output.write(static: "\">")
        output.write(escaped(fitted(name, width: Double(right - left) / 100)))
        output.write(static: "</text></g>\n")
    }

    private static func writeGraph(_ graph: FlameGraph, frames: [FlameGraph.Frame], rows: Int, top: Int, widest: Int64,
                                   thread: ProfileThread, profile: Profile, to output: ByteOutput) {
        let whole = graph.total[0]
        // Hundredths of a pixel per nanosecond.
        let scale = widest > 0 ? Double(graphWidth * 100) / Double(widest) : 0
        let threadName = "thread \(thread.tid)" + (thread.name.isEmpty ? "" : " \"\(thread.name)\"")
            + (thread.isMain ? " (main)" : "") + ", \(TextFormat.milliseconds(Nanoseconds(whole), decimals: 3)) ms"
        for frame in frames {
            let node = frame.node
            let function = Int(graph.function[node])
            let known = function >= 0 && function < profile.functions.count
            let name = known ? profile.functions[function].name : threadName
            // Hundredths of a pixel; the layout keeps 0 <= start <= end <= widest.
            let left = margin * 100 + Int((max(frame.start, 0) * scale).rounded())
            let right = max(margin * 100 + Int((max(frame.end, 0) * scale).rounded()), left)
            let y = top + (rows - 1 - Int(graph.depth[node])) * rowHeight

            let share = whole > 0 ? Double(graph.total[node]) / Double(whole) * 10_000 : 0
            var tooltip = [name,
                           "\(TextFormat.milliseconds(Nanoseconds(graph.total[node]), decimals: 3)) ms ("
                           + TextFormat.fixed(Int64(max(share, 0).rounded()), scale: 2, decimals: 2) + "%), self "
                           + "\(TextFormat.milliseconds(Nanoseconds(graph.selfTime(node)), decimals: 3)) ms",
                           "\(graph.calls[node])" + (node == 0 ? (graph.calls[node] == 1 ? " outermost call" : " outermost calls")
                                                             : (graph.calls[node] == 1 ? " call" : " calls merged"))]
            if known, let file = profile.functions[function].file {
                tooltip.append(file + (profile.functions[function].line.map { ":\($0)" } ?? ""))
            }
            writeFrame(name: name, tooltip: tooltip, left: left, right: right, y: y,
                       fill: known ? colour(of: name) : "rgb(200,200,200)", to: output)
        }
    }

    /// `name` if it fits in a frame `width` pixels wide, else its start and `..`, else nothing.
    /// The script's `fit` does the same when it zooms.
    static func fitted(_ name: String, width: Double) -> String {
        let room = Int(((width - 6) / characterWidth).rounded(.down))
        let count = name.unicodeScalars.count
        if count <= room { return name }
        return room >= 3 ? String(String.UnicodeScalarView(name.unicodeScalars.prefix(room - 2))) + ".." : ""
    }

    /// A warm colour from a hash of the name (FNV-1a): red to yellow, the same for the same name
    /// in every picture.
    static func colour(of name: String) -> String {
        let hash = FNV1a.hash(name.utf8)
        let red = 205 + Int(hash % 51)
        let green = 80 + Int((hash >> 16) % 151)
        let blue = Int((hash >> 32) % 56)
        return "rgb(\(red),\(green),\(blue))"
    }

    static func escaped(_ text: String) -> String { XMLText.escaped(text) }

    /// Zoom: each frame's first geometry is read once; a click on a frame places the frames of its
    /// graph again (its ancestors full width, itself and its descendants scaled, the rest hidden).
    /// Ancestors lie below (greater y) and span it; descendants lie above and within it. Search
    /// asks for a regular expression and paints the matching frames (an empty one clears).
    static let script = """
        <script type="text/ecmascript"><![CDATA[
        (function () {
          var L = \(margin), W = \(graphWidth), CW = \(characterWidth), E = 0.005;
          var reset = document.getElementById('reset');
          var frames = Array.prototype.map.call(document.querySelectorAll('g.f'), function (g) {
            var r = g.querySelector('rect');
            return { g: g, r: r, t: g.querySelector('text'), graph: g.parentNode,
                     x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y'),
                     name: g.querySelector('title').textContent.split('\\n')[0] };
          });
          function fit(name, w) {
            var chars = Array.from(name), n = Math.floor((w - 6) / CW);
            return chars.length <= n ? name : n >= 3 ? chars.slice(0, n - 2).join('') + '..' : '';
          }
          function place(f, x, w) {
            f.r.setAttribute('x', x.toFixed(2));
            f.r.setAttribute('width', w.toFixed(2));
            f.t.setAttribute('x', (x + 3).toFixed(2));
            f.t.textContent = fit(f.name, w);
            f.g.style.display = '';
          }
          function zoom(z) {
            if (!(z.w > 0)) return;
            frames.forEach(function (f) {
              if (f.graph !== z.graph) return;
              if (f.y > z.y && f.x <= z.x + E && f.x + f.w >= z.x + z.w - E) place(f, L, W);
              else if (f.y <= z.y && f.x >= z.x - E && f.x + f.w <= z.x + z.w + E)
                place(f, L + (f.x - z.x) * W / z.w, f.w * W / z.w);
              else f.g.style.display = 'none';
            });
            reset.style.display = '';
          }
          function unzoom() {
            frames.forEach(function (f) { place(f, f.x, f.w); });
            reset.style.display = 'none';
          }
          var search = document.getElementById('search');
          search.style.display = '';
          search.addEventListener('click', function () {
            var pattern = window.prompt('Search frames (regular expression; empty: clear)', '');
            if (pattern === null) return;
            var re = null, matched = 0;
            try { re = pattern ? new RegExp(pattern) : null; } catch (e) { window.alert(e.message); return; }
            frames.forEach(function (f) {
              if (f.fill === undefined) f.fill = f.r.getAttribute('fill');
              var hit = re !== null && re.test(f.name);
              if (hit) matched++;
              f.r.setAttribute('fill', hit ? 'rgb(200,60,220)' : f.fill);
            });
            search.textContent = re ? 'Search: ' + matched + ' frames match ' + pattern : 'Search';
          });
          frames.forEach(function (f) { f.g.addEventListener('click', function () { zoom(f); }); });
          document.getElementById('background').addEventListener('click', unzoom);
          reset.addEventListener('click', unzoom);
        })();
        ]]></script>

        """
}
