@testable import CalltraceKit
import Foundation
import XCTest

/// A trace that was not closed is either from a killed program or from one that is still
/// running. The runtime keeps the trace's header mapped until exit, so the reader looks for the
/// file in the writer's /proc/<pid>/maps; this process stands in for the writer.
final class ReaderRunningProgramTests: XCTestCase {
    /// Maps `url`'s first page shared, as the runtime maps the header, for `body`.
    private func whileMapped(_ url: URL, _ body: () throws -> Void) throws {
        let fd = open(url.path, O_RDWR | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        let page = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        guard let page, page != MAP_FAILED else { return XCTFail("cannot map \(url.path)") }
        defer { munmap(page, 4096) }
        try body()
    }

    private func identity(_ url: URL) -> (device: UInt64, inode: UInt64) {
        var info = stat()
        XCTAssertEqual(stat(url.path, &info), 0)
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// An unclosed trace: this process's pid, calls, no clean-exit flag.
    private func unclosedTrace(named name: String) throws -> URL {
        var trace = SyntheticTrace()
        trace.flags = 0
        trace.pid = UInt64(getpid())
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: SyntheticTrace.process(executable: "/bin/p", arguments: ["p"])),
            .init(stream: 1, tid: UInt64(getpid()), seq: 0, payload: SyntheticTrace.leafCalls(3)),
        ]
        return try trace.write(named: name)
    }

    func testAFileThisProcessMapsIsFoundInItsMaps() throws {
        let url = try unclosedTrace(named: "mapped.trace")
        try whileMapped(url) {
            XCTAssertTrue(WriterLiveness.isRunning(pid: UInt64(getpid()), mapping: identity(url)))
        }
        XCTAssertFalse(WriterLiveness.isRunning(pid: UInt64(getpid()), mapping: identity(url)), "unmapped again")
    }

    func testAFileNotMappedIsNotFound() throws {
        let mapped = try unclosedTrace(named: "mapped.trace")
        let other = try unclosedTrace(named: "other.trace")
        try whileMapped(mapped) {
            XCTAssertFalse(WriterLiveness.isRunning(pid: UInt64(getpid()), mapping: identity(other)))
            // Same inode, other device: the device counts.
            let (device, inode) = identity(mapped)
            XCTAssertFalse(WriterLiveness.isRunning(pid: UInt64(getpid()), mapping: (device ^ 0x1_01, inode)))
            XCTAssertFalse(WriterLiveness.isRunning(pid: 0, mapping: (device, inode)))
            XCTAssertFalse(WriterLiveness.isRunning(pid: UInt64(Int32.max) + 5, mapping: (device, inode)))
        }
    }

    /// The device as /proc/<pid>/maps prints it, from glibc's `dev_t` encoding.
    func testDeviceIsPrintedAsMapsPrintsIt() {
        XCTAssertEqual(WriterLiveness.deviceText(0x0801), "08:01")
        XCTAssertEqual(WriterLiveness.deviceText(0xfd00), "fd:00")
        // major 0x103, minor 0x12345: glibc's makedev puts the minor's high bits from bit 20 on.
        XCTAssertEqual(WriterLiveness.deviceText((0x103 << 8) | 0x45 | (0x12300 << 12)), "103:12345")
        XCTAssertEqual(WriterLiveness.deviceText((0x1000 << 32) | (0x001 << 8) | 0x02), "1001:02")
    }

    func testUnclosedTraceOfARunningProgramSaysItIsRunning() throws {
        let url = try unclosedTrace(named: "running.trace")
        try whileMapped(url) {
            let trace = try TraceReader.read(path: url.path)
            XCTAssertTrue(trace.isStillRunning)
            XCTAssertEqual(trace.warnings, ["the program (pid \(getpid())) is still running; the trace holds what it "
                                            + "recorded so far (3 records)"])
            let info = InfoRenderer(trace: trace).render()
            XCTAssertTrue(info.contains("exit:         still running"), info)
        }
        let after = try TraceReader.read(path: url.path)
        XCTAssertFalse(after.isStillRunning)
        XCTAssertEqual(after.warnings.count, 1)
        XCTAssertTrue(after.warnings[0].hasPrefix("the trace was not closed cleanly"), "\(after.warnings)")
    }

    /// A closed trace is closed, whoever maps it.
    func testClosedTraceIsNeverRunning() throws {
        var trace = SyntheticTrace()
        trace.pid = UInt64(getpid())
        trace.blocks = [.init(stream: 0, tid: 0, seq: 0, payload: SyntheticTrace.process(executable: "/bin/p", arguments: ["p"]))]
        let url = try trace.write(named: "closed.trace")
        try whileMapped(url) {
            let read = try TraceReader.read(path: url.path)
            XCTAssertFalse(read.isStillRunning)
            XCTAssertEqual(read.warnings, [])
        }
    }
}
