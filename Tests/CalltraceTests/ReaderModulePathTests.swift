@testable import CalltraceKit
import Foundation
import XCTest

/// Module paths are whatever the program's file system held: they are opened by their bytes,
/// through a descriptor that is checked before anything is read, and shown lossily.
final class ReaderModulePathTests: XCTestCase {
    /// A module path that is a FIFO (as a path may become between a check and the open): it gets
    /// `name+0xoffset` names and one warning, at once, never a wait for a writer.
    func testFifoModuleGetsOffsetsWithoutWaiting() throws {
        let fifo = Workspace.directory("fifo-module").appendingPathComponent("libfifo.so")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let module = TraceModule(path: fifo.path, base: 0x10000, lo: 0x10000, hi: 0x20000, buildID: [], seenTick: 0)
        let result = Symbolicated()
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var warnings: [String] = []
            let symbolicator = Symbolicator(modules: [module], warn: { warnings.append($0) })
            let name = symbolicator.symbolicate(0x10234, atTick: 1).name
            result.set(name: name, warnings: warnings)
            finished.signal()
        }
        guard finished.wait(timeout: .now() + 60) == .success else {
            return XCTFail("naming an address in a FIFO module did not finish: the reader waits on the FIFO")
        }
        XCTAssertEqual(result.name, "libfifo.so+0x234")
        XCTAssertEqual(result.warnings.count, 1, "\(result.warnings)")
        XCTAssertTrue(result.warnings.first?.contains("is not a regular file") == true, "\(result.warnings)")
    }

    /// A program run from a directory whose name is not UTF-8: its module path is recorded as
    /// bytes, shown with U+FFFD, and still opened, so its functions get their names.
    func testModuleWithANonUTF8PathIsOpenedByItsBytes() throws {
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        let directory: [UInt8] = Array(fixture.directory.path.utf8) + Array("/odd-".utf8) + [0xff, 0xfe] + Array("-dir".utf8)
        XCTAssertEqual(Self.call(directory, { mkdir($0, 0o755) }), 0, "mkdir")
        let binary = directory + Array("/nested".utf8)
        let contents = [UInt8](try Data(contentsOf: fixture.binary))
        let fd = Self.call(binary) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755) }
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(contents.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, contents.count)
        close(fd)
        // Run through an ASCII link: Process takes String paths. The kernel resolves the link,
        // so /proc/self/exe, and the recorded path, are the real, non-UTF-8 one.
        let link = fixture.directory.appendingPathComponent("run-odd")
        XCTAssertEqual(Self.call(binary) { symlink($0, link.path) }, 0, "symlink")
        let trace = fixture.directory.appendingPathComponent("odd.trace")
        let result = try Command.run(link.path, [], environment: ["CALLTRACE_OUTPUT": trace.path,
                                                                  "CALLTRACE_THRESHOLD": "10ms"])
        XCTAssertEqual(result.status, 0, "\(result)")

        let read = try DecodedTrace.read(path: trace.path)
        let module = try XCTUnwrap(read.modules.first { $0.pathBytes.contains(0xff) },
                                   "no module with the odd path: \(read.modules.map(\.path))")
        XCTAssertEqual(module.pathBytes, binary)
        XCTAssertTrue(module.path.contains("\u{FFFD}"), module.path)
        var warnings: [String] = []
        let symbolicator = Symbolicator(modules: read.modules, warn: { warnings.append($0) })
        let names = Set(read.records.map { symbolicator.symbolicate($0.function, atTick: $0.endTick).name })
        XCTAssertTrue(names.isSuperset(of: ["main", "load_config", "parse_section", "draw_frame"]),
                      "names \(names), warnings \(warnings)")
        XCTAssertEqual(warnings, [])
    }

    /// `body` with `path` as a NUL-terminated C string.
    private static func call<R>(_ path: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
        let terminated = path.map { CChar(bitPattern: $0) } + [0]
        return terminated.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// What the symbolicating thread found, handed over under a lock.
private final class Symbolicated: @unchecked Sendable {
    private let lock = NSLock()
    private var storedName = ""
    private var storedWarnings: [String] = []

    func set(name: String, warnings: [String]) {
        lock.lock()
        defer { lock.unlock() }
        storedName = name
        storedWarnings = warnings
    }

    var name: String { lock.lock(); defer { lock.unlock() }; return storedName }
    var warnings: [String] { lock.lock(); defer { lock.unlock() }; return storedWarnings }
}
