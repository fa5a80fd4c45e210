@testable import CalltraceKit
import Foundation
import XCTest

/// `export --format folded` made while the trace is read (`FoldedExportStream`): the same bytes as
/// the view rendered from a whole profile, and memory that does not grow with the calls.
final class FoldedStreamTests: XCTestCase {
    private typealias T = SyntheticTrace
    private let ms: UInt64 = 1_000_000

    /// The streamed stacks of a trace held in memory; nil when the stream asked for a whole profile.
    private func streamed(_ bytes: [UInt8]) throws -> String? { try streamedText(FoldedExport.self, bytes) }

    /// main > 3 x (step > { leaf, rec > rec > leaf, leaf }), then a depth gap (a filtered caller)
    /// and an unfinished call on a second thread.
    private func twoThreads() -> [UInt8] {
        var calls = T.Calls()
        var main: [[UInt8]] = []
        for round in 0..<3 {
            let base = UInt64(round) * 20 * ms + ms
            main.append(calls.call(function: 0x3000, start: base + ms, duration: 2 * ms, depth: 2))
            main.append(calls.call(function: 0x6000, start: base + 5 * ms, duration: 1 * ms, depth: 4))
            main.append(calls.call(function: 0x5000, start: base + 4 * ms, duration: 3 * ms, depth: 3))
            main.append(calls.call(function: 0x5000, start: base + 4 * ms, duration: 5 * ms, depth: 2))
            main.append(calls.call(function: 0x3000, start: base + 10 * ms, duration: UInt64(round + 1) * ms, depth: 2))
            main.append(calls.call(function: 0x2000, start: base, duration: 16 * ms, depth: 1))
        }
        main.append(calls.call(function: 0x1000, start: 0, duration: 70 * ms, depth: 0))
        calls.reset()
        let worker = [
            calls.call(function: 0x5000, start: 2 * ms, duration: 1 * ms, depth: 3),
            calls.call(function: 0x4000, start: 1 * ms, duration: 6 * ms, depth: 1),
            calls.call(function: 0x4000, start: 8 * ms, duration: 9 * ms, depth: 1, flags: TraceFormat.CallFlag.unfinished),
        ]
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: main.flatMap { $0 }),
                        .init(stream: 2, tid: 4243, seq: 0, payload: worker.flatMap { $0 })]
        return trace.bytes
    }

    /// Stacks in the order their first call started, a caller first; threads in the trace's order.
    func testStreamedStacksAreTheViewsBytes() throws {
        let bytes = twoThreads()
        let view = try viewText(FoldedExport.self, bytes)
        XCTAssertEqual(view, """
            thread 4242;0x1000 22000
            thread 4242;0x1000;0x2000 21000
            thread 4242;0x1000;0x2000;0x3000 12000
            thread 4242;0x1000;0x2000;0x5000 6000
            thread 4242;0x1000;0x2000;0x5000;0x5000 6000
            thread 4242;0x1000;0x2000;0x5000;0x5000;0x6000 3000
            thread 4243;0x4000 14000
            thread 4243;0x4000;0x5000 1000

            """)
        XCTAssertEqual(try streamed(bytes), view)
    }

    /// A stream's first calls decoded after its later ones (`OutOfOrderTrace`): the stream does not
    /// guess, the caller renders the view.
    func testCallsDecodedOutOfOrderAskForTheWholeProfile() throws {
        let bytes = OutOfOrderTrace.bytes
        XCTAssertTrue(try viewText(FoldedExport.self, bytes).contains("thread 4242;0x1000;0x2000 2000\n"))
        XCTAssertNil(try streamed(bytes))
    }

    /// A loop of a hundred thousand calls of `step > leaf` keeps a handful of nodes, and a
    /// recursion two hundred deep repeated keeps one path: memory follows the distinct stacks.
    func testForestHoldsDistinctPathsNotCalls() throws {
        var forest = StackForest()
        var start: Int64 = 1
        for _ in 0..<100_000 {
            forest.place(function: 2, start: start + 1, depth: 2, cost: 1)
            forest.place(function: 1, start: start, depth: 1, cost: 3)
            start += 4
        }
        for _ in 0..<50 {
            let root = start
            for level in stride(from: 200, through: 1, by: -1) {
                forest.place(function: 3, start: root + Int64(level), depth: UInt32(level), cost: Int64(400 - level))
            }
            start += 500
        }
        forest.place(function: 0, start: 0, depth: 0, cost: start)
        XCTAssertTrue(forest.isExact)
        XCTAssertLessThan(forest.nodeCount, 2 * 200 + 10, "the stored recursion and the one being merged into it")
        var stacks: [[Int32]: Int64] = [:]
        forest.finish { frames, selfTime, _ in stacks[frames] = selfTime }
        XCTAssertEqual(stacks.count, 3 + 200)
        XCTAssertEqual(stacks[[0, 1, 2]], 100_000)
        XCTAssertEqual(stacks[[0, 1]], 200_000)
        XCTAssertEqual(stacks[[0] + [Int32](repeating: 3, count: 200)], 50 * 200, "the innermost: its whole cost")
    }

    /// The forest's table of children agrees with a dictionary through random inserts and
    /// removals (keys crowded into few parents, so that probes run long and removals shift them).
    func testChildTableAgreesWithADictionary() {
        var table = ChildTable()
        var reference: [UInt64: Int32] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<200_000 {
            let key = UInt64.random(in: 0..<8, using: &generator) << 32 | UInt64.random(in: 0..<3_000, using: &generator)
            if reference[key] == nil {
                if step % 3 != 2 {
                    table.insert(key, Int32(step))
                    reference[key] = Int32(step)
                }
            } else {
                table.remove(key)
                reference[key] = nil
            }
            XCTAssertEqual(table[key], reference[key])
        }
        for (key, value) in reference { XCTAssertEqual(table[key], value) }
        XCTAssertNil(table[UInt64(9) << 32])
    }

    /// The call-path trie finds what a dictionary of (parent, function) -> child holds through
    /// random adds, moves between parents and renames: its cache of the child found last never
    /// answers with a child that was moved away or renamed (few parents and functions, so that
    /// the cache is hit and invalidated often).
    func testCallPathTrieAgreesWithADictionary() {
        var trie = CallPathTrie()
        var reference: [Int32: [Int32: Int32]] = [:]  // parent -> function -> child
        var parentOf: [Int32: Int32] = [:]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<8 { _ = trie.add(function: -1) }  // the parents to start with
        for step in 0..<100_000 {
            let up = Int32.random(in: 0..<Int32(min(trie.count, 40)), using: &generator)
            let called = Int32.random(in: 0..<6, using: &generator)
            switch step % 4 {
            case 0, 1:  // the pre-order walks' step: found, or added
                let child = trie.child(of: up, called)
                if let known = reference[up]?[called] {
                    XCTAssertEqual(child, known, "step \(step)")
                } else {
                    XCTAssertEqual(Int(child), trie.count - 1, "step \(step): a new node")
                    reference[up, default: [:]][called] = child
                    parentOf[child] = up
                }
            case 2:  // a child moved to another parent, renamed when that one has its function
                guard let (child, from) = parentOf.randomElement(using: &generator), child != up else { continue }
                trie.unlink(child)
                reference[from]?[trie.function[Int(child)]] = nil
                parentOf[child] = nil
                XCTAssertEqual(trie.parent[Int(child)], -1)
                let taken = reference[up] ?? [:]
                let function = (0..<12).map { (trie.function[Int(child)] + $0) % 12 }.first { taken[$0] == nil } ?? -1
                trie.rename(child, to: function)
                // Left unlinked when `up` has every function, or is under it (no cycles).
                if function < 0 || isAncestor(child, of: up, parentOf) { continue }
                trie.link(child, under: up)
                reference[up, default: [:]][function] = child
                parentOf[child] = up
            default:
                XCTAssertEqual(trie.find(under: up, called), reference[up]?[called], "step \(step)")
            }
        }
        for (up, children) in reference {
            for (called, child) in children {
                XCTAssertEqual(trie.find(under: up, called), child)
                XCTAssertEqual(trie.parent[Int(child)], up)
            }
        }
    }

    private func isAncestor(_ node: Int32, of other: Int32, _ parentOf: [Int32: Int32]) -> Bool {
        var at: Int32? = other
        while let current = at {
            if current == node { return true }
            at = parentOf[current]
        }
        return false
    }

    /// The command's output on real traces (recursion, recursion on two threads at once, named
    /// threads, unwinding) is the view's, byte for byte.
    func testCommandWritesTheViewsBytesForRealTraces() throws {
        let recursion = try Fixture.build(["recursion.c"], compiler: .gcc, flags: ["-O1", "-g"])
        let threads = try Fixture.build(["threads.c"], compiler: .clang)
        let exceptions = try Fixture.build(["exceptions.cpp"], compiler: .gcc, cxx: true)
        for (fixture, arguments, threaded) in [(recursion, ["walk_sort", "10", "3000"], false),
                                               (recursion, ["mutual", "18"], false),
                                               (recursion, ["threads", "9", "4"], true), (threads, [], true),
                                               (exceptions, [], false)] {
            let name = ([fixture.binary.lastPathComponent] + arguments).joined(separator: " ")
            let (run, trace) = try fixture.run(arguments, environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_MUTE": "off",
                                                                             "CALLTRACE_THREADS": "all"],
                                               traceName: name.replacingOccurrences(of: " ", with: "-"))
            XCTAssertEqual(run.status, 0, run.description)
            defer { try? FileManager.default.removeItem(at: trace) }
            let result = try calltrace(["export", trace.path, "--format", "folded"])
            XCTAssertEqual(result.status, 0, result.description)
            let profile = try ProfileBuilder.read(path: FilePath(trace.path)) { modules in
                Symbolicator(modules: modules, lines: false, warn: { _ in })
            }.1
            XCTAssertEqual(result.stdout, FoldedExport.text(ViewInput([profile])), name)
            // The stacks were streamed, not made from a profile after all.
            XCTAssertTrue(try streams(FoldedExport.self, path: trace.path), name)
            XCTAssertGreaterThan(result.stdout.split(separator: "\n").count, 3, name)
            XCTAssertEqual(result.stdout.hasPrefix("thread "), threaded, name)
        }
    }

    /// Peak memory of `export --format folded` on 2 M calls is under 1.5 times that on 0.5 M: it
    /// does not grow with the calls (a whole profile takes ~50 bytes a call).
    func testMemoryDoesNotGrowWithCalls() throws {
        let fixture = try Fixture.build(["many_calls.c"], compiler: .gcc)
        func peak(rounds: Int) throws -> Int {
            // A ring that holds every call: a busy machine must not make the run drop any.
            let (run, trace) = try fixture.run(["\(rounds)"], environment: ["CALLTRACE_THRESHOLD": "0",
                                                                              "CALLTRACE_BUFFER": "64M"],
                                               traceName: "folded-many-\(rounds)")
            XCTAssertEqual(run.status, 0, run.description)
            defer { try? FileManager.default.removeItem(at: trace) }
            let (kilobytes, result) = try PeakMemory.of(["export", trace.path, "--format", "folded"])
            XCTAssertFalse(result.stdout.isEmpty, result.description)
            return kilobytes
        }
        let small = try peak(rounds: 170_000)
        let large = try peak(rounds: 670_000)
        XCTAssertLessThan(Double(large), 1.5 * Double(small), "peak RSS \(small) KiB for 0.5 M calls, \(large) KiB for 2 M")
    }
}
