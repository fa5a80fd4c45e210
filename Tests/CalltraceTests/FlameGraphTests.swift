@testable import CalltraceKit
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// `calltrace flame`: the SVG parsed with XMLParser (so it is well-formed XML), its frames checked
/// against the synthetic trace's times with exact arithmetic (1180 px for the thread's 100 ms:
/// 11.8 px a millisecond), one row per stack depth, children inside their parents, tooltips,
/// escaping and colours; then a real gcc fixture through the command line.
///   main 0x1000 [0, 100 ms) > { 0x2000 [10, 40 ms) > 0x3000 [15, 25 ms); 0x2000 [50, 90 ms);
///                               0x4000 [92, 92.05 ms); 0x5000 [93, 98 ms) }
/// named main, std::map<K, V&>::find, leaf, tiny, b_func.
final class FlameGraphTests: XCTestCase {
    private typealias T = SyntheticTrace
    private let ms: UInt64 = 1_000_000

    private func profile(names: [String: String], worker: Bool = false) throws -> Profile {
        var trace = T()
        trace.thresholdNs = 10_000
        let payload = FourCalls.payload(extra: [(0x4000, 92 * ms, 50_000), (0x5000, 93 * ms, 5 * ms)])
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: payload)]
        if worker {
            var workerCalls = T.Calls()
            trace.blocks += [.init(stream: 0, tid: 0, seq: 0, payload: T.thread(stream: 2, tid: 4243, name: "worker")),
                             .init(stream: 2, tid: 4243, seq: 0,
                                   payload: workerCalls.call(function: 0x6000, start: 0, duration: 25 * ms, depth: 0))]
        }
        var profile = try syntheticProfile(trace.bytes)
        for index in profile.functions.indices {
            if let name = names[profile.functions[index].name] { profile.functions[index].name = name }
        }
        return profile
    }

    private let names = ["0x1000": "main", "0x2000": "std::map<K, V&>::find", "0x3000": "leaf", "0x4000": "tiny",
                         "0x5000": "b_func", "0x6000": "work"]
    private let root = "thread 4242 (main), 100.000 ms"

    func testFramesAreAsWideAsTheirMergedInclusiveTimes() throws {
        let svg = try SVGFrames(FlameGraphSVG.text(ViewInput([try profile(names: names)])))
        // Siblings in name order: b_func, std::map..., (tiny: 0.05%, left out).
        XCTAssertEqual(svg.frames.map(\.name), [root, "main", "b_func", "std::map<K, V&>::find", "leaf"],
                       svg.text)
        let expected: [String: (x: Double, width: Double)] = [
            root: (10, 1180), "main": (10, 1180),
            "b_func": (10, 5 * 11.8), "std::map<K, V&>::find": (10 + 5 * 11.8, 70 * 11.8), "leaf": (10 + 5 * 11.8, 10 * 11.8),
        ]
        for frame in svg.frames {
            let want = try XCTUnwrap(expected[frame.name])
            XCTAssertEqual(frame.x, want.x, accuracy: 0.005, frame.name)
            XCTAssertEqual(frame.width, want.width, accuracy: 0.005, frame.name)
            XCTAssertEqual(frame.height, 15)
        }
        XCTAssertTrue(svg.subtitle.contains("1 frame narrower than 0.1% left out"), svg.subtitle)
        XCTAssertEqual(svg.title, "pid 4242: 100.000 ms to its last recorded call, 1 thread shown, recorded with threshold 10us",
                       "no program in the trace: its pid; no exit: the end of main's call")
    }

    func testOneRowPerDepthWithChildrenInsideTheirParents() throws {
        let svg = try SVGFrames(FlameGraphSVG.text(ViewInput([try profile(names: names)])))
        let depth = [root: 0, "main": 1, "b_func": 2, "std::map<K, V&>::find": 2, "leaf": 3]
        let bottom = try XCTUnwrap(svg.frames.first).y
        for frame in svg.frames {
            XCTAssertEqual(frame.y, bottom - Double(16 * (depth[frame.name] ?? -1)), "\(frame.name) in its depth's row")
        }
        for frame in svg.frames where frame.y < bottom {
            let parents = svg.frames.filter { $0.y == frame.y + 16 && $0.x <= frame.x && frame.x + frame.width <= $0.x + $0.width }
            XCTAssertEqual(parents.count, 1, "\(frame.name) lies on exactly one frame of the row below")
        }
        // Siblings do not overlap.
        for (a, b) in zip(svg.frames, svg.frames.dropFirst()) where a.y == b.y {
            XCTAssertLessThanOrEqual(a.x + a.width, b.x + 0.005)
        }
    }

    func testTooltipsCarryCostShareSelfAndCalls() throws {
        let svg = try SVGFrames(FlameGraphSVG.text(ViewInput([try profile(names: names)])))
        let tooltip = Dictionary(svg.frames.map { ($0.name, $0.tooltip) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(tooltip["std::map<K, V&>::find"], "std::map<K, V&>::find\n70.000 ms (70.00%), self 60.000 ms\n2 calls merged")
        XCTAssertEqual(tooltip["leaf"], "leaf\n10.000 ms (10.00%), self 10.000 ms\n1 call")
        // main: 100 less its children 70 + 0.05 + 5.
        XCTAssertEqual(tooltip["main"], "main\n100.000 ms (100.00%), self 24.950 ms\n1 call")
        XCTAssertEqual(tooltip[root], root + "\n100.000 ms (100.00%), self 0.000 ms\n1 outermost call")
    }

    /// Threads on one scale, main first: the worker's 25 ms are a quarter of main's 100 ms wide,
    /// in its own graph below main's.
    func testThreadsAreGraphsOnOneScaleMainFirst() throws {
        let svg = try SVGFrames(FlameGraphSVG.text(ViewInput([try profile(names: names, worker: true)])))
        XCTAssertEqual(svg.frames.map(\.name), [root, "main", "b_func", "std::map<K, V&>::find", "leaf",
                                                "thread 4243 \"worker\", 25.000 ms", "work"], svg.text)
        let work = try XCTUnwrap(svg.frames.last)
        XCTAssertEqual(work.x, 10, accuracy: 0.005)
        XCTAssertEqual(work.width, 25 * 11.8, accuracy: 0.005)
        XCTAssertGreaterThan(work.y, svg.frames[0].y, "below main's graph")
        XCTAssertEqual(svg.title, "pid 4242: 100.000 ms to its last recorded call, 2 threads shown, recorded with threshold 10us",
                       "main's 100 ms, the worker's 25 inside them")
    }

    /// The title gives how long the program ran, never its threads' times added up: a worker that
    /// waited for 130 ms of a 130 ms run (a thread pool's idle loop) adds nothing to it.
    func testTitleGivesTheRunsLengthNotTheThreadsTimesAddedUp() throws {
        var trace = T()
        trace.thresholdNs = 10_000
        trace.endTick = 130 * ms
        var mainCalls = T.Calls(), idleCalls = T.Calls()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: mainCalls.call(function: 0x1000, start: 0, duration: 128 * ms, depth: 0)),
                        .init(stream: 0, tid: 0, seq: 0, payload: T.thread(stream: 2, tid: 4243, name: "pool")),
                        .init(stream: 2, tid: 4243, seq: 0, payload: idleCalls.call(function: 0x6000, start: 0, duration: 130 * ms, depth: 0))]
        let profile = try syntheticProfile(trace.bytes)
        XCTAssertEqual(profile.ended, Instant(nanoseconds: Int64(130 * ms)), "the trace's end is the exit")
        let svg = try SVGFrames(FlameGraphSVG.text(ViewInput([profile])))
        XCTAssertEqual(svg.title, "pid 4242: ran 130.000 ms, 2 threads shown, recorded with threshold 10us")
        XCTAssertTrue(svg.frames.contains { $0.name == "thread 4243 \"pool\", 130.000 ms" }, "each thread's own time is on its bottom frame")
    }

    func testNamesAreEscapedAndCutToFit() throws {
        var names = self.names
        names["0x3000"] = "leaf_with_a_name_far_too_long_for_its_frame_of_118_pixels"
        let text = FlameGraphSVG.text(ViewInput([try profile(names: names)]))
        XCTAssertTrue(text.contains("<title>std::map&lt;K, V&amp;&gt;::find\n"), text)
        XCTAssertFalse(text.contains("V&>"))
        let svg = try SVGFrames(text)
        let map = try XCTUnwrap(svg.frames.first { $0.name.hasPrefix("std::map") })
        XCTAssertEqual(map.label, "std::map<K, V&>::find", "826 px hold the whole name")
        let leaf = try XCTUnwrap(svg.frames.first { $0.name.hasPrefix("leaf") })
        // (118 - 6) / 6.7 = 16.7: 16 characters, the last two "..".
        XCTAssertEqual(leaf.label, "leaf_with_a_na..")
        XCTAssertEqual(FlameGraphSVG.fitted("abc", width: 10), "", "no room for three characters")
    }

    /// The colour is a hash of the name (FNV-1a, not Swift's per-process seeded hash): `leaf` is
    /// rgb(237,117,5) at another address, depth and index in another trace, and in every process.
    func testColourIsTheSameForTheSameFunctionInAnotherTrace() throws {
        let first = try SVGFrames(FlameGraphSVG.text(ViewInput([try profile(names: names)])))
        var calls = T.Calls()
        let records = [
            calls.call(function: 0x7000, start: 2 * ms, duration: 3 * ms, depth: 1),
            calls.call(function: 0x6000, start: 0, duration: 10 * ms, depth: 0),
        ]
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 99, seq: 0, payload: records.flatMap { $0 })]
        var other = try syntheticProfile(trace.bytes)
        for index in other.functions.indices {
            other.functions[index].name = other.functions[index].name == "0x7000" ? "leaf" : "run"
        }
        let second = try SVGFrames(FlameGraphSVG.text(ViewInput([other])))
        let a = try XCTUnwrap(first.frames.first { $0.name == "leaf" })
        let b = try XCTUnwrap(second.frames.first { $0.name == "leaf" })
        XCTAssertEqual(a.fill, "rgb(237,117,5)")
        XCTAssertEqual(b.fill, a.fill)
        XCTAssertNotEqual(first.frames.first { $0.name == "main" }?.fill, a.fill)
    }

    /// 10,000 calls of 2^50 ns add up past Int64.max: the sums stop there, nothing traps.
    func testTotalsPastInt64StopAtTheMaximum() throws {
        let count = 10_000
        var thread = ProfileThread(tid: 1, name: "", isMain: true)
        thread.function = [Int32](repeating: 0, count: count)
        thread.setTimes(start: [Int64](repeating: 0, count: count), cost: [Int64](repeating: 1 << 50, count: count))
        thread.overhead = [UInt32](repeating: 0, count: count)
        thread.depthAndFlags = [UInt32](repeating: 0, count: count)
        thread.roots = (0..<Int32(count)).map { $0 }
        thread.firstChild = [Int32](repeating: -1, count: count)
        thread.nextSibling = [Int32](repeating: -1, count: count)
        thread.parent = [Int32](repeating: -1, count: count)
        let profile = Profile(functions: [ProfileFunction(name: "huge")], threads: [thread])
        let svg = try SVGFrames(FlameGraphSVG.text(ViewInput([profile])))
        XCTAssertEqual(svg.frames.map(\.width), [1180, 1180])
        XCTAssertTrue(svg.frames[1].tooltip.contains("\n10000 calls merged"), svg.frames[1].tooltip)
    }

    func testEmptyProfileIsStillAPicture() throws {
        let svg = try SVGFrames(FlameGraphSVG.text(ViewInput([Profile(program: "/bin/empty")])))
        XCTAssertEqual(svg.frames.count, 0)
        XCTAssertTrue(svg.text.contains("no calls recorded"))
    }

    /// The differential graph is registered (the fuzz target and the robustness tests render it)
    /// but asked for with --diff, not as a --format.
    func testFlameIsRegistered() {
        XCTAssertEqual(ViewRegistry.formats(of: .flame), ["svg"])
        XCTAssertTrue(ViewRegistry.all.contains { $0 == DiffFlameGraphSVG.self })
        XCTAssertNil(ViewRegistry.view(.flame, format: DiffFlameGraphSVG.format))
    }

    /// nested.c through the CLI: main at the bottom of its thread, load_config and draw_frame on
    /// it, both parse_section calls merged on load_config; stdout and -o write the same picture.
    func testRealProgramThroughTheCommandLine() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        let (run, trace) = try fixture.run()
        XCTAssertEqual(run.status, 0, run.description)
        let file = fixture.directory.appendingPathComponent("flame.svg")
        try? FileManager.default.removeItem(at: file)
        let written = try calltrace(["flame", trace.path, "-o", file.path])
        XCTAssertEqual(written.status, 0, written.description)
        XCTAssertEqual(written.stdout, "")
        let text = try String(contentsOf: file, encoding: .utf8)
        let svg = try SVGFrames(text)
        let main = try XCTUnwrap(svg.frames.first { $0.name == "main" }, svg.text)
        XCTAssertTrue(main.tooltip.contains("nested.c:"), "file and line of main: \(main.tooltip)")
        func above(_ parent: SVGFrames.Frame, _ name: String) throws -> SVGFrames.Frame {
            let frame = try XCTUnwrap(svg.frames.first { $0.name == name }, "\(name) in \(svg.frames.map(\.name))")
            XCTAssertEqual(frame.y, parent.y - 16, "\(name) one row above \(parent.name)")
            XCTAssertGreaterThanOrEqual(frame.x, parent.x)
            XCTAssertLessThanOrEqual(frame.x + frame.width, parent.x + parent.width + 0.005)
            return frame
        }
        let load = try above(main, "load_config")
        _ = try above(main, "draw_frame")
        let parse = try above(load, "parse_section")
        XCTAssertTrue(parse.tooltip.contains("\n2 calls merged"), parse.tooltip)
        XCTAssertGreaterThanOrEqual(parse.width, 24.0 / 80 * 1180 * 0.9, "24 ms of sleeps in an about 80 ms run: \(parse)")
        XCTAssertTrue(svg.title.hasPrefix("nested: ran ") && svg.title.contains(" ms, 1 thread shown, recorded with threshold "),
                      svg.title)

        let piped = try calltrace(["flame", trace.path, "--thread", "main"])
        XCTAssertEqual(piped.status, 0, piped.description)
        XCTAssertEqual(piped.stdout, text)
        let missing = try calltrace(["flame", trace.path, "--thread", "1"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.hasPrefix("calltrace: error: ") && missing.stderr.contains("no thread 1"), missing.stderr)
        XCTAssertEqual(missing.stderr.split(separator: "\n").count, 1, missing.stderr)
        let unwritable = try calltrace(["flame", trace.path, "-o", "/nonexistent/dir/flame.svg"])
        XCTAssertEqual(unwritable.status, 1)
        XCTAssertEqual(unwritable.stderr, "calltrace: error: /nonexistent/dir/flame.svg: cannot write: No such file or directory\n")
    }

    // MARK: - flame --diff

    /// One run: main (0x1000) with load (0x2000), and 0x3000 or 0x4000 beneath it, in ms.
    private func run(main: Double, load: Double, other: UInt64, otherMs: Double) throws -> Profile {
        typealias R = SyntheticRuns
        return try R.profile(R.trace([R.call(0x2000, 1, load), R.call(other, 70, otherMs), R.call(0x1000, 0, main, depth: 0)]))
    }

    /// Five runs a side: load (0x2000) 40 ms in every base run, about 60 in every new one (slower:
    /// red; the base's ties make the p-value the normal approximation's, 0.007); main's own time
    /// falls from 50 to about 35 ms (blue); 0x3000 only in BASE (listed under the graph); 0x4000 only
    /// in NEW (red: new time). NEW's shape: main spans the width.
    func testDiffColoursEachFrameByTheChangeOfItsSelfTime() throws {
        let base = try [100.0, 101, 99, 102, 98].map { try run(main: $0, load: 40, other: 0x3000, otherMs: 10) }
        let new = try [100.0, 101, 99, 102, 98].map { try run(main: $0, load: 60 + ($0 - 100) / 10, other: 0x4000, otherMs: 5) }
        let text = DiffFlameGraphSVG.text(ViewInput(new, baseline: base))
        let svg = try SVGFrames(text)
        XCTAssertEqual(svg.frames.map(\.name), ["app", "0x1000", "0x2000", "0x4000"])
        let load = try XCTUnwrap(svg.frames.first { $0.name == "0x2000" })
        XCTAssertTrue(load.fill.hasPrefix("rgb(245,"), load.fill)
        XCTAssertTrue(load.tooltip.contains("self per run: base 40.00 ms, new 60.00 ms, change +20.00 ms (+50.0%), p = 0.007 (slower)"),
                      load.tooltip)
        let added = try XCTUnwrap(svg.frames.first { $0.name == "0x4000" })
        XCTAssertTrue(added.fill.hasPrefix("rgb(245,"), "new code is slower: \(added.fill)")
        let root = try XCTUnwrap(svg.frames.first { $0.name == "app" })
        XCTAssertEqual(root.fill, "rgb(205,205,205)", "the program's node has no self time")
        let main = try XCTUnwrap(svg.frames.first { $0.name == "0x1000" })
        XCTAssertTrue(main.fill.hasPrefix("rgb(") && main.fill.hasSuffix(",245)"), "main's own time fell: \(main.fill); \(main.tooltip)")
        XCTAssertEqual(main.width, Double(FlameGraphSVG.graphWidth), accuracy: 0.01)
        XCTAssertTrue(text.contains("only in BASE (inclusive time per run):</text>"), text)
        XCTAssertTrue(text.contains(">  0x1000;0x3000 10.00 ms</text>"), text)
        // The same runs on both sides: nothing changed, every frame grey.
        let same = try SVGFrames(DiffFlameGraphSVG.text(ViewInput(base, baseline: base)))
        XCTAssertTrue(same.frames.allSatisfy { $0.fill == "rgb(205,205,205)" }, "\(same.frames.map(\.fill))")
    }

    func testDiffFromTheCommandLine() throws {
        let base = Workspace.directory("flame-diff-base"), new = Workspace.directory("flame-diff-new")
        try Data(SyntheticRuns.base.bytes).write(to: base.appendingPathComponent("1.trace"))
        try Data(SyntheticRuns.new.bytes).write(to: new.appendingPathComponent("1.trace"))
        let out = new.appendingPathComponent("diff.svg")
        let drawn = try calltrace(["flame", "--diff", base.path, new.path, "-o", out.path])
        XCTAssertEqual(drawn.status, 0, drawn.description)
        let svg = try SVGFrames(try String(contentsOf: out, encoding: .utf8))
        XCTAssertTrue(svg.frames.contains { $0.name == "0x2000" && $0.fill.hasPrefix("rgb(245,") }, "\(svg.frames.map { ($0.name, $0.fill) })")
        let one = try calltrace(["flame", "--diff", base.path])
        XCTAssertEqual(one.status, 64, one.description)
        XCTAssertTrue(one.stderr.contains("--diff takes two arguments, BASE and NEW"), one.stderr)
        let two = try calltrace(["flame", base.appendingPathComponent("1.trace").path, new.appendingPathComponent("1.trace").path])
        XCTAssertNotEqual(two.status, 0, two.description)
        XCTAssertTrue(two.stderr.contains("expected one trace file (or --diff BASE NEW)"), two.stderr)
        // --format diff, the other way of asking, is gone: it says which one to use.
        for arguments in [["flame", "--diff", base.path, new.path, "--format", "diff"],
                          ["flame", base.appendingPathComponent("1.trace").path, "--format", "diff"]] {
            let old = try calltrace(arguments)
            XCTAssertEqual(old.status, 64, old.description)
            XCTAssertTrue(old.stderr.contains("--format diff is no longer taken: draw a differential flame graph with "
                                              + "--diff BASE NEW"), old.stderr)
        }
    }
}

/// A flame graph SVG read back with XMLParser: each frame's rectangle, tooltip and label, and the
/// title and subtitle. Throws when the text is not well-formed XML.
struct SVGFrames {
    struct NotXML: Error { var reason: String }

    struct Frame {
        var name: String
        var tooltip: String
        var label: String
        var x: Double
        var y: Double
        var width: Double
        var height: Double
        var fill: String
    }

    let text: String
    private(set) var frames: [Frame] = []
    private(set) var title = ""
    private(set) var subtitle = ""

    init(_ text: String) throws {
        self.text = text
        let reader = Reader()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = reader
        guard parser.parse() else { throw NotXML(reason: "\(parser.parserError.map { "\($0)" } ?? "?")\n\(text.prefix(3000))") }
        frames = reader.frames
        title = reader.texts["title"] ?? ""
        subtitle = reader.texts["subtitle"] ?? ""
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var frames: [Frame] = []
        var texts: [String: String] = [:]
        private var current: Frame?
        private var field: String?
        private var characters = ""

        func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            characters = ""
            switch element {
            case "g" where attributes["class"] == "f":
                current = Frame(name: "", tooltip: "", label: "", x: .nan, y: .nan, width: .nan, height: .nan, fill: "")
            case "rect" where current != nil:
                current?.x = Double(attributes["x"] ?? "") ?? .nan
                current?.y = Double(attributes["y"] ?? "") ?? .nan
                current?.width = Double(attributes["width"] ?? "") ?? .nan
                current?.height = Double(attributes["height"] ?? "") ?? .nan
                current?.fill = attributes["fill"] ?? ""
            case "text" where current == nil:
                field = attributes["id"]
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { characters += string }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            switch element {
            case "title" where current != nil:
                current?.tooltip = characters
                current?.name = String(characters.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
            case "text" where current != nil:
                current?.label = characters
            case "text":
                if let field { texts[field] = characters }
                field = nil
            case "g":
                if let current { frames.append(current) }
                current = nil
            default:
                break
            }
        }
    }
}
