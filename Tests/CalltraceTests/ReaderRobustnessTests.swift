import CalltraceKit
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// Bad input never crashes the reader: a file that is not a trace gets one `calltrace: error:`
/// line and a non-zero exit; a damaged or cut trace gets warnings and whatever could be read; a
/// binary that changed since recording gets `module+0xoffset` names, never wrong ones.
final class ReaderRobustnessTests: XCTestCase {
    // MARK: - Files that are not traces

    /// Times at the ends of the clock (durations of 2^63 ticks and more, starts near 0 and near
    /// 2^64, frames and marks as far apart as ticks go) through every view: no overflow trap.
    func testExtremeTimesGoThroughEveryView() throws {
        typealias T = SyntheticTrace
        var calls = T.Calls()
        let huge = UInt64(1) << 63
        let records = [
            calls.call(function: 0x2000, start: 1, duration: huge + 12345, depth: 1),
            calls.call(function: 0x3000, start: UInt64.max - 10, duration: huge, depth: 1),
            calls.call(function: 0x3000, start: UInt64.max / 2, duration: UInt64.max, depth: 2),
            calls.call(function: 0x1000, start: 0, duration: UInt64.max, depth: 0),
        ]
        let metadata = T.frames(at: [0, huge, UInt64.max, 5]) + T.mark("far", tick: UInt64.max)
            + T.mark("near", tick: 0)
        var trace = T()
        trace.processStartNs = 1
        trace.initTick = huge
        trace.mainTick = UInt64.max
        trace.endTick = 3
        trace.frameIntervalNs = UInt64.max
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 0, payload: records.flatMap { $0 }),
                        .init(stream: 0, tid: 0, seq: 0, payload: metadata)]
        try renderEverything(trace.bytes)
        var options = ViewOptions()
        options.collapse = true
        options.showSelf = true
        try renderEverything(trace.bytes, options: options)
    }

    /// The largest stream ids (the accumulator once took UInt32.max for "no stream yet" and
    /// trapped: found by the fuzzer): UInt32.max - 1 is a thread like any other, alone or after
    /// another stream; UInt32.max is a flight recorder's events stream, where a call is damage,
    /// skipped with a warning.
    func testLargestStreamIdsNeverTrap() throws {
        typealias T = SyntheticTrace
        var calls = T.Calls()
        let records = [calls.call(function: 0x2000, start: 1, duration: 5, depth: 1),
                       calls.call(function: 0x1000, start: 0, duration: 10, depth: 0)]
        for streams in [[UInt32.max - 1], [1, UInt32.max - 1], [UInt32.max - 1, 1], [UInt32.max], [1, UInt32.max],
                        [UInt32.max, 1]] {
            var trace = T()
            trace.blocks = streams.enumerated().map { position, stream in
                .init(stream: stream, tid: 4242 + UInt64(position), seq: 0, payload: records.flatMap { $0 })
            }
            let (read, profile) = try renderEverything(trace.bytes)
            let threads = streams.filter { $0 != TraceFormat.eventsStream }
            XCTAssertEqual(profile.threads.map(\.count), threads.map { _ in 2 }, "\(streams)")
            XCTAssertEqual(read.warnings.contains { $0.contains("a call record in the events stream") },
                           threads.count < streams.count, "\(streams): \(read.warnings)")
        }
    }

    /// A call record in the metadata stream (a block header or SEGMENT whose stream byte was hit:
    /// a fresh-clone run's damaged trace met one) is damage: skipped with a warning, so every call
    /// the reader keeps is one a thread shows.
    func testACallInTheMetadataStreamIsSkippedWithAWarning() throws {
        typealias T = SyntheticTrace
        var calls = T.Calls()
        let call = calls.call(function: 0x1000, start: 0, duration: 10, depth: 0)
        var trace = T()
        trace.blocks = [.init(stream: 0, tid: 0, seq: 0, payload: T.process(executable: "/bin/app", arguments: ["app"]) + call)]
        let (read, profile) = try renderEverything(trace.bytes)
        XCTAssertEqual(profile.callCount, 0)
        XCTAssertTrue(read.warnings.contains { $0.contains("a call record in the metadata stream") }, "\(read.warnings)")
    }

    func testEmptyFileIsRejectedInOneLine() throws {
        let file = try write([], named: "empty.trace")
        try assertRejected(file, saying: "empty")
    }

    func testDirectoryIsRejectedInOneLine() throws {
        try assertRejected(Workspace.directory("a-directory"), saying: "is a directory")
    }

    func testMissingFileIsRejectedInOneLine() throws {
        try assertRejected(Workspace.temporary.appendingPathComponent("no-such.trace"), saying: "cannot open")
    }

    func testRandomBytesAreRejectedInOneLine() throws {
        var random = XorShift(seed: 0x5eed)
        for size in [1, 7, 100, 4095, 4096, 5000, 70_000] {
            let file = try write((0..<size).map { _ in random.nextByte() }, named: "random-\(size).trace")
            try assertRejected(file)
        }
    }

    func testForeignFilesAreRejectedInOneLine() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + [UInt8](repeating: 0, count: 5000)
        try assertRejected(try write(png, named: "image.png"), saying: "not a calltrace trace")
        try assertRejected(try write(Array("hello, world\n".utf8), named: "text.trace"), saying: "not a calltrace trace")
        // Almost the magic: a reader must compare all eight bytes.
        let nearMagic = Array("CALLTRCX".utf8) + [UInt8](repeating: 0, count: 8000)
        try assertRejected(try write(nearMagic, named: "near-magic.trace"), saying: "not a calltrace trace")
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        try assertRejected(fixture.binary, saying: "not a calltrace trace")
    }

    func testNewerFormatVersionIsRejectedInOneLine() throws {
        let original = try Data(contentsOf: try Self.smallBlockTrace().trace)
        for version: UInt16 in [UInt16(TraceFormat.version) + 1, 0xffff] {
            var bytes = [UInt8](original)
            bytes[8] = UInt8(version & 0xff)
            bytes[9] = UInt8(version >> 8)
            try assertRejected(try write(bytes, named: "version-\(version).trace"), saying: "newer calltrace")
        }
    }

    func testDamagedHeaderIsRejectedInOneLine() throws {
        let original = [UInt8](try Data(contentsOf: try Self.smallBlockTrace().trace))
        var badHeaderSize = original
        badHeaderSize[12] = 0x01  // header_size 4097
        try assertRejected(try write(badHeaderSize, named: "header-size.trace"), saying: "header")
        var badBlockSize = original
        badBlockSize[16...19] = [0x01, 0x10, 0x00, 0x00]  // block_size 4097
        try assertRejected(try write(badBlockSize, named: "block-size.trace"), saying: "block size")
    }

    // MARK: - Cut traces

    func testTruncatedTraceIsReadUpToTheCut() throws {
        let recorded = try Self.smallBlockTrace()
        let bytes = [UInt8](try Data(contentsOf: recorded.trace))
        let blockSize = Int(try TraceReader.read(bytes: bytes).header.blockSize)
        let full = try calltrace(["report", recorded.trace.path])
        XCTAssertEqual(full.status, 0, "\(full)")
        let known = Set(treeNames(full.stdout))
        XCTAssertTrue(known.contains("parse_section"), "\(full)")

        // Every 97 bytes through the header and the first blocks, then a few big cuts.
        var cuts = Array(stride(from: 0, to: min(bytes.count, TraceHeader.size + 3 * blockSize), by: 97))
        cuts += [TraceHeader.size, TraceHeader.size + blockSize, bytes.count - blockSize / 2, bytes.count - 1]
        let results = try runConcurrently(cuts.enumerated().map { index, cut in
            let file = try write(Array(bytes.prefix(cut)), named: "cut-\(cut).trace")
            // `info` reads the same way as `report`: every fourth cut is enough for it.
            return (cut, index % 4 == 0 ? [["report", file.path], ["info", file.path]] : [["report", file.path]])
        })
        for (cut, command, result) in results {
            let context = "cut at \(cut) of \(bytes.count), \(command[0]):\n\(result)"
            assertNoCrash(result, context)
            if cut < TraceHeader.size {
                assertOneErrorLine(result, context)
                continue
            }
            XCTAssertEqual(result.status, 0, context)
            XCTAssertFalse(result.stderr.contains("error"), context)
            // A cut on a block boundary leaves a file the runtime could have written.
            let onBoundary = cut > TraceHeader.size && (cut - TraceHeader.size) % blockSize == 0
            if !onBoundary {
                XCTAssertTrue(result.stderr.contains("calltrace: warning:"), context)
            }
            if command[0] == "report" {
                for name in treeNames(result.stdout) where !known.contains(name) {
                    XCTAssertTrue(name.hasPrefix("0x") || name.contains("+0x"), "wrong name \(name): \(context)")
                }
            }
        }
    }

    func testTruncatedTraceWithLargeBlocksIsReadUpToTheCut() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .clang)
        let (_, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0"])
        let bytes = [UInt8](try Data(contentsOf: url))
        let blockSize = Int(try TraceReader.read(bytes: bytes).header.blockSize)
        XCTAssertGreaterThan(blockSize, 4096, "the default buffer should make large blocks")
        let full = try calltrace(["report", url.path])
        let fullCount = full.stdout.split(separator: "\n").count
        // Inside the metadata, inside the records, in a block's unused tail.
        for cut in [TraceHeader.size + 200, TraceHeader.size + blockSize + 1000, TraceHeader.size + blockSize + blockSize / 2] {
            let file = try write(Array(bytes.prefix(cut)), named: "large-cut-\(cut).trace")
            let result = try calltrace(["report", file.path])
            let context = "cut at \(cut):\n\(result)"
            assertNoCrash(result, context)
            XCTAssertEqual(result.status, 0, context)
            XCTAssertTrue(result.stderr.contains("calltrace: warning: the trace file is truncated"), context)
            XCTAssertLessThanOrEqual(result.stdout.split(separator: "\n").count, fullCount, context)
        }
    }

    // MARK: - Damaged traces, in process

    /// Flips bytes all over a real trace and reads, builds and renders each result in this
    /// process: a trap would take the test runner down.
    func testCorruptedTraceNeverTraps() throws {
        let original = [UInt8](try Data(contentsOf: try Self.smallBlockTrace().trace))
        let header = try TraceReader.read(bytes: original).header
        let blockSize = Int(header.blockSize)
        // Every header field byte and block header byte four ways, every 31st payload byte two ways.
        let headerChanges: [(UInt8) -> UInt8] = [{ $0 ^ 0xff }, { _ in 0x00 }, { _ in 0x80 }, { $0 &+ 1 }]
        var changes = Array(repeating: (offset: 0, change: headerChanges[0]), count: 0)
        func add(_ offsets: some Sequence<Int>, _ chosen: [(UInt8) -> UInt8]) {
            for offset in offsets { changes += chosen.map { (offset, $0) } }
        }
        add(0..<168, headerChanges)
        for block in stride(from: TraceHeader.size, to: original.count, by: blockSize) {
            add(block..<min(block + 32, original.count), headerChanges)
            add(stride(from: block + 32, to: min(block + blockSize, original.count), by: 31), Array(headerChanges.prefix(2)))
        }
        var read = 0
        var rejected = 0
        for (offset, change) in changes {
            do {
                var bytes = original
                bytes[offset] = change(bytes[offset])
                // Rendering a thousand calls is the slow part: every profile, every 8th rendering.
                if read % 8 == 0 { try renderEverything(bytes) } else { _ = try syntheticProfile(bytes) }
                read += 1
            } catch is TraceError {
                rejected += 1
            }
        }
        XCTAssertGreaterThan(read, rejected, "most single-byte damage is after the header")
    }

    func testCutAndDamagedTracesInProcess() throws {
        let original = [UInt8](try Data(contentsOf: try Self.smallBlockTrace().trace))
        var random = XorShift(seed: 42)
        var read = 0
        for round in 0..<300 {
            var bytes = Array(original.prefix(TraceHeader.size + Int(random.next() % UInt64(original.count))))
            for _ in 0..<8 where bytes.count > TraceHeader.size {
                let offset = TraceHeader.size + Int(random.next() % UInt64(bytes.count - TraceHeader.size))
                bytes[offset] = random.nextByte()
            }
            // Damage past the header is read around (with warnings) or rejected as a TraceError.
            do {
                let profile = try renderEverything(bytes).profile
                XCTAssertLessThanOrEqual(profile.callCount, bytes.count / 2, "round \(round): records out of nothing")
                read += 1
            } catch is TraceError {
            } catch {
                XCTFail("round \(round): not a TraceError: \(error)")
            }
        }
        // The header is intact in every round: most of them must read.
        XCTAssertGreaterThan(read, 250, "only \(read) of 300 cut and damaged traces read")
    }

    // MARK: - Binaries that changed since recording

    func testRebuiltBinaryGetsOffsetsNotWrongNames() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        let (_, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        let rebuilt = try Fixture.build(["nested.c"], compiler: .gcc, flags: ["-O1"], name: "nested-rebuilt")
        try replace(fixture.binary, with: rebuilt.binary)
        try assertOffsetNames(url, module: "nested", warning: "nested changed since the trace was recorded (build-id differs)")
    }

    func testDeletedBinaryGetsOffsets() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .clang)
        let (_, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        try FileManager.default.removeItem(at: fixture.binary)
        try assertOffsetNames(url, module: "nested", warning: "\(fixture.binary.path) no longer exists")
    }

    func testBinaryReplacedByAnotherFileGetsOffsets() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        let (_, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        try FileManager.default.removeItem(at: fixture.binary)
        try Data("#!/bin/sh\necho not the program\n".utf8).write(to: fixture.binary)
        try assertOffsetNames(url, module: "nested", warning: "is not an ELF file")
    }

    /// Without a build-id only the file's time tells: modified after the program loaded it means
    /// it is not the file that ran.
    func testRebuiltBinaryWithoutBuildIDGetsOffsets() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, flags: ["-O2", "-Wl,--build-id=none"],
                                        name: "nested-no-id")
        let (_, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "10ms"])
        XCTAssertEqual(try RecordedTrace(url).outline.first, "main", "unchanged: names come from the file")
        let rebuilt = try Fixture.build(["nested.c"], compiler: .gcc, flags: ["-O0", "-Wl,--build-id=none"],
                                        name: "nested-no-id-rebuilt")
        try replace(fixture.binary, with: rebuilt.binary)
        try assertOffsetNames(url, module: "nested-no-id", warning: "nested-no-id changed since the trace was recorded")
        // Storing the names now must not take them from the rebuilt file (the load time is checked
        // on that path too): the stored table has none for it, and the names stay offsets.
        let symbolize = try calltrace(["symbolize", url.path])
        XCTAssertEqual(symbolize.status, 0, "\(symbolize)")
        XCTAssertTrue(symbolize.stderr.contains("nested-no-id changed since the trace was recorded"), "\(symbolize)")
        try assertOffsetNames(url, module: "nested-no-id", warning: "nested-no-id changed since the trace was recorded")
    }

    // MARK: - Fuzzing

    /// A short run of each fuzz target (docs/fuzzing.md has the long run).
    func testShortFuzzRunsFindNothing() throws {
        try Workspace.requireProducts()
        for target in ["trace", "elf"] {
            let result = try Command.run(Workspace.packageRoot.appendingPathComponent("Scripts/fuzz").path,
                                         [target, "10"],
                                         environment: ["CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path],
                                         currentDirectory: Workspace.packageRoot)
            if result.status == 77 { throw XCTSkip("no libFuzzer in this toolchain: \(result.stderr)") }
            XCTAssertEqual(result.status, 0, "Scripts/fuzz \(target) 10:\n\(result.stdout.suffix(3000))\n\(result.stderr.suffix(6000))")
            XCTAssertTrue(result.stderr.contains("stat::number_of_executed_units"), "the fuzzer did not run:\n\(result)")
        }
    }

    // MARK: - Helpers

    /// nested.c with every call recorded and a small buffer, so 4 KiB blocks: a short file with
    /// a metadata block and several record blocks. Recorded once for the class.
    private static var smallBlock: Fixture?
    private static func smallBlockTrace() throws -> (fixture: Fixture, trace: URL) {
        if let fixture = smallBlock { return (fixture, fixture.directory.appendingPathComponent("small.trace")) }
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc, name: "nested-small")
        let (result, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_BUFFER": "8k"],
                                            traceName: "small")
        XCTAssertEqual(result.status, 0, "\(result)")
        smallBlock = fixture
        return (fixture, url)
    }


    /// Runs each case's CLI commands, two at a time.
    private func runConcurrently(_ cases: [(Int, [[String]])]) throws -> [(Int, [String], CommandResult)] {
        let jobs = cases.flatMap { cut, commands in commands.map { (cut, $0) } }
        var results = [CommandResult?](repeating: nil, count: jobs.count)
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            let result = try? calltrace(jobs[index].1)
            lock.lock()
            results[index] = result
            lock.unlock()
        }
        return try jobs.indices.map { index in
            guard let result = results[index] else {
                XCTFail("could not run calltrace \(jobs[index].1)")
                throw TestFailure("calltrace did not run")
            }
            return (jobs[index].0, jobs[index].1, result)
        }
    }

    private func write(_ bytes: [UInt8], named name: String) throws -> URL {
        let url = Workspace.directory("robustness").appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    private func replace(_ binary: URL, with other: URL) throws {
        // A new file, as a linker makes: the old inode may still be mapped somewhere.
        try FileManager.default.removeItem(at: binary)
        try FileManager.default.copyItem(at: other, to: binary)
    }

    /// `report` and `info` both exit non-zero with exactly one error line and no output.
    private func assertRejected(_ file: URL, saying text: String? = nil,
                                line: UInt = #line) throws {
        for command in ["report", "info"] {
            let result = try calltrace([command, file.path])
            let context = "\(command) \(file.lastPathComponent):\n\(result)"
            assertNoCrash(result, context, line: line)
            assertOneErrorLine(result, context, line: line)
            XCTAssertEqual(result.stdout, "", context, line: line)
            if let text { XCTAssertTrue(result.stderr.contains(text), "expected '\(text)': \(context)", line: line) }
        }
    }

    private func assertOneErrorLine(_ result: CommandResult, _ context: String, line: UInt = #line) {
        XCTAssertNotEqual(result.status, 0, context, line: line)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.count, 1, "one line on stderr: \(context)", line: line)
        XCTAssertTrue(result.stderr.hasPrefix("calltrace: error: "), context, line: line)
    }

    private func assertNoCrash(_ result: CommandResult, _ context: String, line: UInt = #line) {
        XCTAssertNil(result.signal, "killed by a signal: \(context)", line: line)
        XCTAssertFalse(result.stderr.contains("Fatal error"), context, line: line)
        XCTAssertFalse(result.stderr.contains("Backtrac"), context, line: line)
    }

    /// `report` of `url` names every call of `module` as `module+0x...` and warns once, in tree
    /// and JSON lines; no call gets a name from the changed file.
    private func assertOffsetNames(_ url: URL, module: String, warning: String, line: UInt = #line) throws {
        for format in ["tree", "jsonl"] {
            let result = try calltrace(["report", url.path, "--format", format])
            let context = "report --format \(format):\n\(result)"
            assertNoCrash(result, context, line: line)
            XCTAssertEqual(result.status, 0, context, line: line)
            XCTAssertEqual(result.stderr.components(separatedBy: warning).count - 1, 1,
                           "one warning '\(warning)': \(context)", line: line)
            let names = format == "tree" ? treeNames(result.stdout) : jsonNames(result.stdout)
            XCTAssertEqual(names.count, 5, context, line: line)
            for name in names {
                XCTAssertTrue(name.hasPrefix("\(module)+0x"), "name \(name) not from offsets: \(context)", line: line)
            }
            XCTAssertFalse(result.stdout.contains("\"line\""), "lines from a changed file: \(context)", line: line)
        }
    }

    /// The function names of a `report` tree: ` 1|  12.11 ms|    name (unfinished)`.
    private func treeNames(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap(treeLineName)
    }

    private func jsonNames(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["function"] as? String
        }
    }
}

/// A small deterministic random source, so a failure can be replayed.
private struct XorShift {
    var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    mutating func nextByte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
}
