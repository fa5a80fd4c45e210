@testable import CalltraceKit
import Foundation
import XCTest

/// Trace files whose bytes are fine but whose file is odd: holes, a cut while it is read, a size
/// of 100 GB, a FIFO. The reader reads with `pread` and skips holes, so each reads in time linear
/// in its data, with warnings, never with a signal.
final class ReaderFileTests: XCTestCase {
    /// Two streams of calls in three blocks, and a metadata block.
    private func smallTrace(blockSize: Int = 4096) -> SyntheticTrace {
        var trace = SyntheticTrace()
        trace.blockSize = blockSize
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: SyntheticTrace.process(executable: "/bin/prog", arguments: ["prog"])),
            .init(stream: 1, tid: 4242, seq: 0, payload: SyntheticTrace.leafCalls(100)),
            .init(stream: 1, tid: 4242, seq: 1, payload: SyntheticTrace.leafCalls(100, startingAt: 5000)),
        ]
        return trace
    }

    /// Writes `trace`'s header and blocks where `offsets` say, leaving holes everywhere else, and
    /// gives the file `size` bytes.
    private func writeSparse(_ trace: SyntheticTrace, blocksAt offsets: [Int], size: Int, named name: String) throws -> URL {
        let url = Workspace.directory("sparse").appendingPathComponent(name)
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0, "cannot create \(url.path)")
        defer { close(fd) }
        XCTAssertEqual(ftruncate(fd, off_t(size)), 0, "cannot size \(url.path) to \(size) bytes")
        func put(_ bytes: [UInt8], at offset: Int) {
            let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
            XCTAssertEqual(written, bytes.count, "short write at \(offset)")
        }
        put(trace.header, at: 0)
        for (block, offset) in zip(trace.blocks, offsets) { put(SyntheticTrace.block(block, size: trace.blockSize), at: offset) }
        return url
    }

    // MARK: - Holes

    func testHolesBetweenBlocksAreSkippedAndTheBlocksAfterThemRead() throws {
        var trace = smallTrace()
        let blockSize = trace.blockSize
        let offsets = [4096, 4096 + 5 * blockSize, 4096 + 40 * blockSize]
        trace.nextBlock = UInt64(4096 + 41 * blockSize)
        let url = try writeSparse(trace, blocksAt: offsets, size: 4096 + 41 * blockSize, named: "holes.trace")
        let read = try DecodedTrace.read(path: url.path)
        XCTAssertEqual(read.callCount, 200, "\(read.warnings)")
        XCTAssertEqual(read.records(ofStream: 1).map(\.startTick).first, 1000)
        XCTAssertEqual(read.process?.executable, "/bin/prog")
        XCTAssertEqual(read.warnings, [], "unused blocks and holes are normal")
    }

    /// A full tmpfs leaves pages of a block unbacked: they read as zeros. The records before the
    /// hole are kept, the block gets one warning, and the next block is read.
    func testHoleInsideABlockKeepsTheRecordsBeforeIt() throws {
        var trace = smallTrace(blockSize: 16384)
        // 2000 calls of 6 bytes: the payload runs from the first page into the third.
        trace.blocks[1].payload = SyntheticTrace.leafCalls(2000)
        XCTAssertGreaterThan(trace.blocks[1].payload.count, 8192)
        let bytes = trace.bytes
        let second = 4096 + 16384
        let hole = (second + 4096)..<(second + 8192)
        let url = Workspace.directory("hole").appendingPathComponent("hole-in-block.trace")
        // Everything but the hole's page, written into a file of the full size.
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        XCTAssertEqual(ftruncate(fd, off_t(bytes.count)), 0)
        for range in [0..<hole.lowerBound, hole.upperBound..<bytes.count] {
            let written = bytes[range].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(range.lowerBound)) }
            XCTAssertEqual(written, range.count)
        }
        close(fd)

        let read = try DecodedTrace.read(path: url.path)
        let first = read.records(ofStream: 1).count
        XCTAssertGreaterThan(first, 600, "the calls before the hole: \(read.warnings)")
        XCTAssertLessThan(first, 2100, "\(read.warnings)")
        let damage = read.warnings.filter { $0.contains("block 0 of stream 1") }
        XCTAssertEqual(damage.count, 1, "one warning for the damaged block: \(read.warnings)")
        // Found as a hole where the file system keeps page-sized holes; else its zeros are no record.
        let why = ["a hole (never written) at byte \(hole.lowerBound)", "unknown record kind 0x0"]
        XCTAssertTrue(why.contains { damage.first?.contains($0) == true }, "\(damage)")
        XCTAssertTrue(read.records(ofStream: 1).contains { $0.startTick == 5000 }, "the next block is read")
    }

    /// A file whose every block is damaged (holes over the payloads, say) says so in a few lines,
    /// not in one line per block.
    func testDamageOverManyBlocksIsSummarised() throws {
        var trace = SyntheticTrace()
        for seq in 0..<500 {
            trace.blocks.append(.init(stream: 1, tid: 4242, seq: UInt64(seq), payload: SyntheticTrace.leafCalls(2) + [0x00, 0x00]))
        }
        let read = try DecodedTrace.read(bytes: trace.bytes)
        XCTAssertEqual(read.callCount, 1000)
        let damage = read.warnings.filter { $0.contains("unknown record kind 0x0") }
        XCTAssertEqual(damage.count, WarningList.limit, "\(read.warnings.count) warnings")
        XCTAssertTrue(read.warnings.contains("\(500 - WarningList.limit) more warnings like these were left out"),
                      "\(read.warnings.suffix(3))")
    }

    // MARK: - Size

    /// 100 GB of holes in a trace that was not closed (so `next_block` is 100 GB too): the reader
    /// jumps over them with SEEK_DATA, a few reads in all, and finds the block at the end.
    func testHundredGigabyteSparseTraceReadsInAFewReads() throws {
        var trace = smallTrace()
        trace.flags = 0
        let size = 100 << 30
        trace.nextBlock = UInt64(size)
        let url = try writeSparse(trace, blocksAt: [4096, 4096 + 4096, size - 4096], size: size, named: "huge.trace")
        let source = try WatchedTraceSource(path: url.path)
        let started = Date()
        let read = try DecodedTrace.read(source)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(read.callCount, 200, "\(read.warnings)")
        XCTAssertTrue(read.records(ofStream: 1).contains { $0.startTick == 5000 }, "the block at the end is read")
        // The header, four block headers, three blocks; a lookup per hole crossed.
        XCTAssertLessThanOrEqual(source.reads, 16, "reads of a 100 GB sparse file")
        XCTAssertLessThanOrEqual(source.dataLookups, 16)
        XCTAssertLessThan(elapsed, 30, "seconds to read a 100 GB sparse file")
    }

    /// A block that claims a gigabyte of payload over a hole: the reader reads up to the hole,
    /// not a gigabyte of zeros into memory.
    func testGigabyteBlockOfHolesIsReadOnlyUpToTheHole() throws {
        var trace = SyntheticTrace()
        trace.blockSize = 1 << 30
        trace.flags = 0
        var block = SyntheticTrace.block(.init(stream: 1, tid: 4242, seq: 0, payload: SyntheticTrace.leafCalls(10)),
                                         size: 4096)
        SyntheticTrace.put(UInt64((1 << 30) - 32), 4, at: TraceFormat.BlockOffset.used, in: &block)
        trace.blocks = []
        trace.nextBlock = UInt64(4096 + (1 << 30))
        let url = try writeSparse(trace, blocksAt: [], size: 4096 + (1 << 30), named: "gigablock.trace")
        let fd = open(url.path, O_WRONLY | O_CLOEXEC)
        _ = block.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 4096) }
        close(fd)
        let source = try WatchedTraceSource(path: url.path)
        let read = try DecodedTrace.read(source)
        XCTAssertEqual(read.callCount, 10, "\(read.warnings)")
        // Where the file system reports holes (ext4, xfs, btrfs, tmpfs: all page-sized).
        if read.warnings.contains(where: { $0.contains("a hole (never written) at byte 8192") }) {
            XCTAssertLessThan(source.bytesRead, 1 << 20, "bytes read of a block of holes")
        }
    }

    /// A closed trace says where it ends (`next_block`): 100 GB of file after that are not read.
    func testBytesPastNextBlockAreIgnoredWithAWarning() throws {
        let trace = smallTrace()
        let size = 100 << 30
        let end = 4096 + 3 * 4096
        var garbage = trace
        garbage.blocks = [.init(stream: 1, tid: 4242, seq: 2, payload: SyntheticTrace.leafCalls(50, startingAt: 90_000))]
        let url = try writeSparse(trace, blocksAt: [4096, 8192, 12288], size: size, named: "long.trace")
        // A block-shaped thing after the end, which must not be read as one.
        let fd = open(url.path, O_WRONLY | O_CLOEXEC)
        let block = SyntheticTrace.block(garbage.blocks[0], size: 4096)
        _ = block.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(end + 4096)) }
        close(fd)
        let source = try WatchedTraceSource(path: url.path)
        let read = try DecodedTrace.read(source)
        XCTAssertEqual(read.callCount, 200, "\(read.warnings)")
        XCTAssertFalse(read.records.contains { $0.startTick >= 90_000 }, "a block past next_block was read")
        XCTAssertEqual(read.warnings.filter { $0.contains("past the end of the trace") }.count, 1, "\(read.warnings)")
        XCTAssertTrue(read.warnings.contains { $0.contains("at byte \(end + 4096)") }, "\(read.warnings)")
        XCTAssertLessThanOrEqual(source.reads, 10)
    }

    /// Space the runtime reserved past `next_block` but never used (a block it could not map, or
    /// a program killed while the next block was being prepared) is zeros: no warning.
    func testZerosPastNextBlockAreNotWorthAWarning() throws {
        var trace = smallTrace()
        trace.flags = 0
        var bytes = trace.bytes + [UInt8](repeating: 0, count: 3 * 4096)
        bytes += [UInt8](repeating: 0, count: 100)  // and a partial one
        let url = Workspace.directory("reserved").appendingPathComponent("reserved.trace")
        try Data(bytes).write(to: url)
        let read = try DecodedTrace.read(path: url.path)
        XCTAssertEqual(read.callCount, 200)
        XCTAssertEqual(read.warnings, ["the trace was not closed cleanly (the program was killed or crashed); "
                                       + "showing 200 records written before that"])
    }

    // MARK: - Cut while being read

    /// The file is cut after the reader found its blocks and before it read them: with a mapping
    /// that was a SIGBUS; now the reader keeps what it could read and says the file was cut.
    func testTraceCutWhileBeingReadKeepsWhatItReadAndWarns() throws {
        let trace = smallTrace()
        let url = try trace.write(named: "cut-while-read.trace")
        // Reads: the header, three block headers, then the blocks: cut before the third block,
        // half-way into the second.
        let source = try WatchedTraceSource(path: url.path, cutAfterReads: 5, cutTo: 4096 + 4096 + 300)
        let read = try DecodedTrace.read(source)
        XCTAssertEqual(read.process?.executable, "/bin/prog")
        let calls = read.records(ofStream: 1)
        XCTAssertGreaterThan(calls.count, 0, "\(read.warnings)")
        XCTAssertLessThan(calls.count, 100, "the cut block is read up to the cut: \(read.warnings)")
        XCTAssertTrue(read.warnings.contains { $0.contains("cut while being read") }, "\(read.warnings)")
    }

    /// A thread cuts and regrows the file over and over while this process reads it: nothing the
    /// reader does may raise a signal (which would end the test run).
    func testTraceCutAndRegrownDuringReadsNeverSignals() throws {
        var trace = smallTrace()
        for seq in 2..<64 {
            trace.blocks.append(.init(stream: 1, tid: 4242, seq: UInt64(seq),
                                      payload: SyntheticTrace.leafCalls(500, startingAt: UInt64(seq) * 10_000)))
        }
        let bytes = trace.bytes
        let url = try trace.write(named: "cut-repeatedly.trace")
        let stop = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let path = url.path
        Thread.detachNewThread {
            var cut = 4096
            while stop.wait(timeout: .now()) == .timedOut {
                _ = truncate(path, off_t(cut))
                cut = (cut * 7 + 4099) % bytes.count
                if let handle = FileHandle(forWritingAtPath: path) {
                    handle.write(Data(bytes))
                    try? handle.close()
                }
            }
            done.signal()
        }
        var reads = 0
        for _ in 0..<200 {
            if (try? ProfileBuilder.read(path: FilePath(path), makeSymbolicator: { Symbolicator(modules: $0, warn: { _ in }) })) != nil {
                reads += 1
            }
        }
        stop.signal()
        done.wait()
        XCTAssertGreaterThan(reads, 0, "no read saw even the header")
    }

    // MARK: - Not a file

    func testFifoTracePathIsRefusedWithoutWaiting() throws {
        let url = Workspace.directory("fifo").appendingPathComponent("trace.fifo")
        XCTAssertEqual(mkfifo(url.path, 0o600), 0)
        XCTAssertThrowsError(try DecodedTrace.read(path: url.path)) { error in
            XCTAssertEqual("\(error)", "cannot open \(url.path): not a regular file")
        }
    }
}
