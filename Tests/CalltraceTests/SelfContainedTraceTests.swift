@testable import CalltraceKit
import Foundation
import XCTest

/// Self-contained traces (docs/trace-format.md, "Stored symbols"): `record` and `symbolize` store
/// the names and lines a trace uses into it, and every view reads them when the program's files
/// are gone or rebuilt; a damaged table is a warning and a fallback to the files, never a crash.
final class SelfContainedTraceTests: XCTestCase {
    private typealias T = SyntheticTrace


    /// `report --format json` of a trace: exit 0 and the output.
    private func reportJSON(_ trace: URL, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try calltrace(["report", trace.path, "--format", "json"])
        XCTAssertEqual(result.status, 0, result.description, file: file, line: line)
        return result.stdout
    }

    /// Every call of a `report --format json` document as "function file:line", in tree order.
    private func calls(_ json: String) throws -> [String] {
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        var found: [String] = []
        func walk(_ call: [String: Any]) {
            let file = (call["file"] as? String).map { ($0 as NSString).lastPathComponent } ?? "-"
            found.append("\(call["function"] as? String ?? "?") \(file):\(call["line"] as? Int ?? 0)")
            (call["children"] as? [[String: Any]] ?? []).forEach(walk)
        }
        for thread in document["threads"] as? [[String: Any]] ?? [] {
            (thread["calls"] as? [[String: Any]] ?? []).forEach(walk)
        }
        return found
    }

    /// The line of nested.c that starts `function`'s definition: where DWARF puts its entry.
    private func definitionLine(_ function: String) throws -> Int {
        let source = try String(contentsOf: Workspace.fixtures.appendingPathComponent("nested.c"), encoding: .utf8)
        let lines = source.components(separatedBy: "\n")
        let index = try XCTUnwrap(lines.firstIndex { $0.contains(" \(function)(") && $0.contains("{") })
        return index + 1
    }

    /// nested.c's calls over 10 ms with their definition lines, in tree order.
    private func expectedNestedCalls() throws -> [String] {
        let main = "main nested.c:\(try definitionLine("main"))"
        let load = "load_config nested.c:\(try definitionLine("load_config"))"
        let parse = "parse_section nested.c:\(try definitionLine("parse_section"))"
        let draw = "draw_frame nested.c:\(try definitionLine("draw_frame"))"
        return [main, load, parse, parse, draw]
    }

    // MARK: - Through the command line, on real programs

    func testRecordStoresNamesAndLinesThatOutliveTheBinary() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, flags: ["-O0", "-g"], wrapper: false, name: "sc-record")
        let trace = fixture.directory.appendingPathComponent("recorded.trace")
        let run = try RecordCommand.run(["-t", "10ms", "-o", trace.path], [fixture.binary.path], in: fixture.directory)
        XCTAssertEqual(run.status, 0, run.description)
        let before = try reportJSON(trace)
        XCTAssertEqual(try calls(before), try expectedNestedCalls(), before)
        let info = try calltrace(["info", trace.path])
        XCTAssertTrue(info.stdout.contains("symbols:") && info.stdout.contains("stored in the trace (self-contained: "),
                      info.description)
        XCTAssertTrue(info.stdout.contains("with source lines"), info.stdout)

        try FileManager.default.removeItem(at: fixture.binary)
        let after = try calltrace(["report", trace.path, "--format", "json"])
        XCTAssertEqual(after.status, 0, after.description)
        XCTAssertEqual(after.stdout, before, "the same report without the binary")
        XCTAssertFalse(after.stderr.contains("no longer exists"), after.stderr)
        let folded = try calltrace(["export", trace.path, "--format", "folded"])
        XCTAssertTrue(folded.stdout.contains("main;load_config;parse_section "), folded.description)
    }

    func testRecordWithNoSymbolsStoresNone() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, wrapper: false, name: "sc-nosym")
        let trace = fixture.directory.appendingPathComponent("plain.trace")
        let run = try RecordCommand.run(["--no-symbols", "-o", trace.path], [fixture.binary.path], in: fixture.directory)
        XCTAssertEqual(run.status, 0, run.description)
        let info = try calltrace(["info", trace.path])
        XCTAssertTrue(info.stdout.contains("not stored (names come from the program's files"), info.description)
        XCTAssertEqual(try TraceReader.read(path: trace.path).header.symbolsOffset, 0)
    }

    /// A trace written with CALLTRACE_* directly, symbolized, then its program rebuilt from other
    /// code: the report is the one from before. Symbolizing again changes no byte.
    func testSymbolizeMakesAnEnvironmentTraceSelfContainedAndIsIdempotent() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, flags: ["-O0", "-g"], name: "sc-env")
        let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        XCTAssertEqual(run.status, 0, run.description)
        let plainSize = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: trace.path)[.size] as? Int)
        XCTAssertTrue(try calltrace(["info", trace.path]).stdout.contains("not stored"))
        let before = try reportJSON(trace)
        XCTAssertEqual(try calls(before), try expectedNestedCalls(), before)

        let stored = try calltrace(["symbolize", trace.path])
        XCTAssertEqual(stored.status, 0, stored.description)
        XCTAssertTrue(stored.stderr.contains("stored 4 of 4 names with source lines"), stored.stderr)
        let first = try Data(contentsOf: trace)
        XCTAssertGreaterThan(first.count, plainSize, "the table is appended")
        XCTAssertEqual(try TraceReader.read(path: trace.path).header.symbolsOffset, UInt64(plainSize))

        // Rebuilt from other code at the same path: another build-id, other functions.
        _ = try Fixture.build(["marks.c"], compiler: .gcc, name: "sc-env", in: fixture.directory)
        let after = try calltrace(["report", trace.path, "--format", "json"])
        XCTAssertEqual(after.status, 0, after.description)
        XCTAssertEqual(after.stdout, before, "the same report from the stored names")
        XCTAssertFalse(after.stderr.contains("changed since the trace was recorded"), after.stderr)

        let again = try calltrace(["symbolize", trace.path])
        XCTAssertEqual(again.status, 0, again.description)
        XCTAssertEqual(try Data(contentsOf: trace), first, "symbolize twice: the same file")
        XCTAssertEqual(try reportJSON(trace), before)
    }

    /// `symbolize --no-lines`: lines come from the binary while it is there, none once it is gone.
    func testTableWithoutLinesTakesLinesFromTheBinaryWhileItExists() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, flags: ["-O0", "-g"], name: "sc-nolines")
        let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        XCTAssertEqual(run.status, 0, run.description)
        let stored = try calltrace(["symbolize", "--no-lines", trace.path])
        XCTAssertEqual(stored.status, 0, stored.description)
        XCTAssertTrue(try calltrace(["info", trace.path]).stdout.contains("without source lines"))
        XCTAssertEqual(try calls(try reportJSON(trace)), try expectedNestedCalls())
        try FileManager.default.removeItem(at: fixture.binary)
        XCTAssertEqual(try calls(try reportJSON(trace)),
                       ["main -:0", "load_config -:0", "parse_section -:0", "parse_section -:0", "draw_frame -:0"])
    }

    /// A garbled or cut table: one warning, names from the binary, never a crash.
    func testDamagedTableWarnsAndFallsBackToTheBinary() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, flags: ["-O0", "-g"], name: "sc-damaged")
        let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        XCTAssertEqual(run.status, 0, run.description)
        XCTAssertEqual(try calltrace(["symbolize", trace.path]).status, 0)
        let good = [UInt8](try Data(contentsOf: trace))
        let header = try TraceReader.read(path: trace.path).header
        let tableStart = Int(header.symbolsOffset)
        let expected = try expectedNestedCalls()

        var garbled = good
        garbled[tableStart + TraceFormat.SymbolTable.headerSize + 3] ^= 0x5a
        var shortened = good
        shortened.removeLast(7)
        var misplaced = good
        SyntheticTrace.put(UInt64(good.count + 4096), 8, at: TraceFormat.HeaderOffset.symbolsOffset, in: &misplaced)
        for (damaged, what) in [(garbled, "garbled"), (shortened, "cut"), (misplaced, "offset past the end")] {
            try Data(damaged).write(to: trace)
            let result = try calltrace(["report", trace.path, "--format", "json"])
            XCTAssertEqual(result.status, 0, "\(what): \(result)")
            XCTAssertTrue(result.stderr.contains("stored symbol table"), "\(what): \(result.stderr)")
            XCTAssertEqual(try calls(result.stdout), expected, what)
            let info = try calltrace(["info", trace.path])
            XCTAssertTrue(info.stdout.contains("not stored"), "\(what): \(info)")
        }
        // symbolize replaces a damaged table (one whose place the header still gives) by a sound one.
        for damaged in [garbled, shortened] {
            try Data(damaged).write(to: trace)
            XCTAssertEqual(try calltrace(["symbolize", trace.path]).status, 0)
            XCTAssertEqual([UInt8](try Data(contentsOf: trace)), good)
        }
    }

    /// A `symbols_offset` pointing into the blocks (damaged, or crafted) must not hide them from
    /// the reader, and `symbolize` must not cut the file there: the calls all stay.
    func testOffsetIntoTheBlocksCutsNothing() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, flags: ["-O0", "-g"], name: "sc-offset")
        let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        XCTAssertEqual(run.status, 0, run.description)
        let expected = try expectedNestedCalls()
        var bytes = [UInt8](try Data(contentsOf: trace))
        let size = bytes.count
        T.put(UInt64(TraceHeader.size), 8, at: TraceFormat.HeaderOffset.symbolsOffset, in: &bytes)
        T.put(0, 8, at: TraceFormat.HeaderOffset.symbolsOffset + 8, in: &bytes)
        try Data(bytes).write(to: trace)
        let before = try calltrace(["report", trace.path, "--format", "json"])
        XCTAssertEqual(before.status, 0, before.description)
        XCTAssertTrue(before.stderr.contains("stored symbol table is damaged"), before.stderr)
        XCTAssertEqual(try calls(before.stdout), expected)
        let symbolize = try calltrace(["symbolize", trace.path])
        XCTAssertEqual(symbolize.status, 0, symbolize.description)
        XCTAssertGreaterThan(try Data(contentsOf: trace).count, size, "the table is appended, nothing cut")
        try FileManager.default.removeItem(at: fixture.binary)
        XCTAssertEqual(try calls(try reportJSON(trace)), expected, "all calls, named from the new table")
    }

    /// Storing again when the file cannot grow (RLIMIT_FSIZE: the write fails with EFBIG) keeps
    /// the earlier table, whole and in use.
    func testAFailedStoreKeepsTheEarlierTable() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, flags: ["-O0", "-g"], name: "sc-efbig")
        let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        XCTAssertEqual(run.status, 0, run.description)
        XCTAssertEqual(try calltrace(["symbolize", trace.path]).status, 0)
        let good = try Data(contentsOf: trace)
        // The limit is in 512-byte blocks (ulimit -f); the file may not grow at all.
        let limited = try Command.run("/bin/sh", ["-c", "ulimit -f \(good.count / 512) && exec \"$0\" symbolize \"$1\"",
                                                  Workspace.cli.path, trace.path], timeout: 120)
        XCTAssertEqual(limited.status, 1, limited.description)
        XCTAssertTrue(limited.stderr.contains("cannot store the names"), limited.stderr)
        XCTAssertEqual(try Data(contentsOf: trace), good, "the earlier table stays as it was")
        try FileManager.default.removeItem(at: fixture.binary)
        XCTAssertEqual(try calls(try reportJSON(trace)), try expectedNestedCalls())
    }

    /// fork.c: the child writes its own trace next to the program's; both get their names.
    func testRecordStoresNamesInForkChildrensTraces() throws {
        let fixture = try Fixture.build(["fork.c"], compiler: .gcc, wrapper: false, name: "sc-fork")
        let output = fixture.directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let trace = output.appendingPathComponent("parent.trace")
        let run = try RecordCommand.run(["-t", "10ms", "-o", trace.path], [fixture.binary.path], in: fixture.directory)
        XCTAssertEqual(run.status, 0, run.description)
        let traces = RecordCommand.files(in: output).filter { $0.hasSuffix(".trace") }
        XCTAssertEqual(traces.count, 2, "\(traces)")
        for name in traces {
            let read = try TraceReader.read(path: output.appendingPathComponent(name).path)
            XCTAssertGreaterThan(try XCTUnwrap(read.storedSymbols, "\(name) stores its names").names, 0)
        }
        try FileManager.default.removeItem(at: fixture.binary)
        let child = try XCTUnwrap(traces.first { $0 != "parent.trace" })
        let report = try calltrace(["report", output.appendingPathComponent(child).path])
        XCTAssertEqual(report.status, 0, report.description)
        XCTAssertTrue(report.stdout.contains("child_work"), report.stdout)
        XCTAssertFalse(report.stderr.contains("no longer exists"), report.stderr)
    }

    /// killed.c ends by SIGKILL: its trace was never closed (the runtime had no chance to trim
    /// the file), and storing its names works all the same.
    func testKilledProgramsTraceIsSymbolized() throws {
        let fixture = try Fixture.build(["killed.c"], compiler: .gcc, name: "sc-killed")
        let (_, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "5ms"])
        let read = try TraceReader.read(path: trace.path)
        XCTAssertFalse(read.header.closedCleanly)
        let before = try reportJSON(trace)
        XCTAssertTrue(before.contains("\"function\":\"step\""), before)
        let stored = try calltrace(["symbolize", trace.path])
        XCTAssertEqual(stored.status, 0, stored.description)
        try FileManager.default.removeItem(at: fixture.binary)
        let after = try calltrace(["report", trace.path, "--format", "json"])
        XCTAssertEqual(after.status, 0, after.description)
        XCTAssertEqual(after.stdout, before)
        XCTAssertEqual(try TraceReader.read(path: trace.path).warnings, read.warnings, "the table adds no warning")
    }

    /// A trace whose program still runs (this process maps its header, as the runtime does) is
    /// refused in one line and left as it was.
    func testSymbolizeRefusesATraceStillBeingWritten() throws {
        var trace = SyntheticTrace()
        trace.flags = 0
        trace.pid = UInt64(getpid())
        trace.blocks = [.init(stream: 1, tid: UInt64(getpid()), seq: 0, payload: SyntheticTrace.leafCalls(3))]
        let url = try trace.write(named: "sc-running.trace")
        let fd = open(url.path, O_RDWR | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        let page = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        guard let page, page != MAP_FAILED else { return XCTFail("cannot map \(url.path)") }
        defer { munmap(page, 4096) }
        let result = try calltrace(["symbolize", url.path])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderr, "calltrace: error: \(url.path) is still being written (its program, pid \(getpid()), "
                       + "is running); store its names once the program has ended\n")
        XCTAssertEqual([UInt8](try Data(contentsOf: url)), trace.bytes, "left as it was")
    }

    func testSymbolizeRefusesWhatIsNotATrace() throws {
        let directory = Workspace.directory("sc-refuse")
        let file = directory.appendingPathComponent("text.trace")
        try Data("hello".utf8).write(to: file)
        let result = try calltrace(["symbolize", file.path])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertEqual(try Data(contentsOf: file), Data("hello".utf8), "left as it was")
    }

    // MARK: - Synthetic traces

    private static let base: UInt64 = 0x7f00_0000_0000
    private static let module = TraceModule(path: "/nonexistent/sc/libgone.so", base: base, lo: base + 0x1000,
                                            hi: base + 0x9000, buildID: [0xab, 0xcd], seenTick: .zero)

    /// A closed trace of calls to two functions of a module whose file does not exist.
    private func syntheticTrace() -> [UInt8] {
        var calls = T.Calls()
        let records = calls.call(function: Self.base + 0x1100, start: 10, duration: 5, depth: 1)
            + calls.call(function: Self.base + 0x1000, start: 0, duration: 100, depth: 0)
        let module = Self.module
        let metadata = T.module(path: module.pathBytes, base: module.base, lo: module.lo, hi: module.hi,
                                buildID: module.buildID)
        var trace = T()
        trace.blocks = [.init(stream: 0, tid: 0, seq: 0, payload: metadata),
                        .init(stream: 1, tid: 4242, seq: 0, payload: records)]
        return trace.bytes
    }

    private func withTable(_ trace: [UInt8], _ table: [UInt8]) -> [UInt8] {
        var bytes = trace
        T.put(UInt64(trace.count), 8, at: TraceFormat.HeaderOffset.symbolsOffset, in: &bytes)
        T.put(UInt64(table.count), 8, at: TraceFormat.HeaderOffset.symbolsSize, in: &bytes)
        return bytes + table
    }

    private func table(lines: Bool = true) -> [UInt8] {
        let symbols = StoredSymbols(hasLines: lines, entries: [
            (0x1100, StoredSymbol(name: "leaf_fn", file: lines ? "src/leaf.c" : nil, line: lines ? 7 : nil)),
            (0x1000, StoredSymbol(name: "_ZN2ns4rootEv", file: lines ? "src/root.cc" : nil, line: lines ? 42 : nil)),
        ])
        return StoredSymbolTable.encode(modules: [(0, Self.module, symbols)], hasLines: lines)
    }

    func testStoredNamesAreDemangledWhenReadAndNeedNoFile() throws {
        let read = try TraceReader.read(bytes: withTable(syntheticTrace(), table()))
        XCTAssertEqual(read.warnings, [], "a table after the blocks is not news")
        XCTAssertEqual(read.storedSymbols, StoredSymbolsSummary(names: 2, hasLines: true, bytes: UInt64(table().count)))
        XCTAssertEqual(read.callCount, 2)
        var warnings: [String] = []
        let symbolicator = Symbolicator(modules: read.modules, lines: true, warn: { warnings.append($0) })
        XCTAssertEqual(symbolicator.symbolicate(Self.base + 0x1000, atTick: .zero),
                       Symbol(name: "ns::root()", module: "libgone.so", file: "src/root.cc", line: 42))
        XCTAssertEqual(symbolicator.symbolicate(Self.base + 0x1100, atTick: .zero),
                       Symbol(name: "leaf_fn", module: "libgone.so", file: "src/leaf.c", line: 7))
        XCTAssertEqual(warnings, [], "no file was needed")
        // An address the table lacks comes from the (missing) file: named by offset, with a warning.
        XCTAssertEqual(symbolicator.symbolicate(Self.base + 0x2000, atTick: .zero).name, "libgone.so+0x2000")
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        let report = try viewText(ReportJSONView.self, withTable(syntheticTrace(), table()))
        XCTAssertTrue(report.contains("\"function\":\"ns::root()\""), report)
    }

    func testTableEncodingIsExact() throws {
        let symbols = StoredSymbols(hasLines: true, entries: [(0x30, StoredSymbol(name: "f", file: "a.c", line: 3))])
        let module = TraceModule(path: "/m", base: 0x100, lo: 0x110, hi: 0x200, buildID: [7], seenTick: .zero)
        let bytes = StoredSymbolTable.encode(modules: [(2, module, symbols)], hasLines: true)
        // files: 1, "a.c"; modules: 1; index 2, base 0x100 (varint 0x80 0x02), lo 0x110 (0x90 0x02),
        // hi 0x200 (0x80 0x04), build-id [7], path "/m", 1 entry: +0x30, "f", file 1, line 3.
        let body: [UInt8] = [1, 3, 0x61, 0x2e, 0x63, 1, 2, 0x80, 0x02, 0x90, 0x02, 0x80, 0x04, 1, 7, 2, 0x2f, 0x6d,
                             1, 0x30, 1, 0x66, 1, 3]
        var header = Array("CTSYMTAB".utf8) + [1, 0, 0, 0] + [1, 0, 0, 0]
        header += [UInt8(body.count), 0, 0, 0, 0, 0, 0, 0]
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        for shift in stride(from: 0, to: 64, by: 8) { header.append(UInt8(truncatingIfNeeded: hash >> UInt64(shift))) }
        XCTAssertEqual(bytes, header + body)
        let modules = [module, module, module]
        let decoded = try StoredSymbolTable.decode(bytes, modules: modules)
        XCTAssertEqual(decoded.modules, [2: symbols])
        XCTAssertTrue(decoded.hasLines)
        XCTAssertThrowsError(try StoredSymbolTable.decode(bytes, modules: [module]), "module 2 of 1")
    }

    /// Every byte of the table flipped, and bodies mangled with a valid checksum: the reader never
    /// traps, and a table it takes is whole.
    func testCraftedTablesNeverTrap() throws {
        let trace = syntheticTrace()
        let table = table()
        let good = withTable(trace, table)
        for index in trace.count..<good.count {
            var damaged = good
            damaged[index] ^= 0xff
            let read = try renderEverything(damaged).trace
            if read.storedSymbols == nil {
                XCTAssertTrue(read.warnings.contains { $0.contains("stored symbol table is damaged") }, "byte \(index)")
            }
        }
        // Bodies with a valid checksum: bounds checks, not the checksum, must catch these.
        let body = Array(table[TraceFormat.SymbolTable.headerSize...])
        var generator = SystemRandomNumberGenerator()
        for round in 0..<2000 {
            var mangled = body
            for _ in 0..<(1 + round % 4) {
                mangled[Int.random(in: 0..<mangled.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if round % 7 == 0 { mangled.removeLast(Int.random(in: 1...mangled.count, using: &generator)) }
            var fields = [UInt8](repeating: 0, count: 16)
            T.put(UInt64(mangled.count), 8, at: 0, in: &fields)
            T.put(StoredSymbolTable.checksum(mangled), 8, at: 8, in: &fields)
            let crafted = Array(table[0..<16]) + fields + mangled
            try renderEverything(withTable(trace, crafted))
        }
        // Header fields that point anywhere.
        for (offset, size) in [(UInt64(1), UInt64(1)), (UInt64.max, UInt64.max), (UInt64(trace.count), UInt64.max),
                               (UInt64(4096), UInt64(trace.count)), (0, 5)] {
            var bytes = good
            T.put(offset, 8, at: TraceFormat.HeaderOffset.symbolsOffset, in: &bytes)
            T.put(size, 8, at: TraceFormat.HeaderOffset.symbolsSize, in: &bytes)
            try renderEverything(bytes)
        }
    }
}
