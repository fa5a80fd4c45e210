import CalltraceKit
import Foundation
import XCTest

/// The program's files are untouchable: the runtime keeps its descriptor out of the program's
/// descriptor table, so a program that closes every descriptor and opens (or dup2s) its own onto
/// the low numbers never finds trace blocks in its files, nor its files truncated at exit.
final class FileSafetyTests: XCTestCase {
    func testDaemonThatClosesEveryDescriptorKeepsItsFilesIntact() throws {
        let fixture = try Fixture.build(["daemon.c"], compiler: .gcc)
        for mode in ["close_range", "loop", "dup2"] {
            let files = Workspace.directory("daemon-files-\(mode)")
            let (result, url) = try fixture.run([mode, files.path], environment: ["CALLTRACE_THRESHOLD": "0"],
                                                traceName: "daemon-\(mode)", timeout: 120)
            assertDidNotHang(result, mode)
            XCTAssertEqual(result.status, 0, "\(mode): \(result)")
            XCTAssertTrue(result.stdout.hasPrefix("daemon: done "), "\(mode): \(result)")
            // After exit: nothing written into, truncated or grown.
            let db = contents(of: files.appendingPathComponent("db"))
            XCTAssertEqual(db?.count, Self.expectedDatabase.count, "\(mode): the database's size changed")
            XCTAssertTrue(db == Self.expectedDatabase, "\(mode): the database's bytes changed: \(Self.describe(db))")
            let log = contents(of: files.appendingPathComponent("log"))
            XCTAssertEqual(log?.count, Self.expectedLog.count, "\(mode): the log's size changed")
            XCTAssertTrue(log == Self.expectedLog, "\(mode): the log's bytes changed: \(Self.describe(log))")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: files.path).sorted(), ["db", "log"], mode)

            // The trace is complete and closed: the runtime never lost its own file.
            let shape = try TraceShape(url)
            let header = shape.trace.header
            let context = "\(mode):\n\(shape.censusText)"
            XCTAssertTrue(header.closedCleanly, context)
            XCTAssertEqual(shape.calls(named: "work").count, 22, context)
            XCTAssertEqual(UInt64(shape.calls(named: "leaf").count) + header.drops, UInt64(Self.leafCalls), context)
            XCTAssertEqual(shape.calls.filter { $0.parent == nil }.map(\.name), ["main"], context)
        }
    }

    func testRuntimeDescriptorIsNotInTheProgramsTable() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["daemon.c"], compiler: compiler)
            for threads in ["main", "all"] {
                let (result, url) = try fixture.run(["fds"], environment: ["CALLTRACE_THRESHOLD": "0",
                                                                           "CALLTRACE_THREADS": threads],
                                                    timeout: 60)
                XCTAssertEqual(result.status, 0, "\(compiler) \(threads): \(result)")
                let descriptors = result.stdout.split(separator: "\n").filter { $0.hasPrefix("fd ") }
                XCTAssertFalse(descriptors.isEmpty, result.stdout)
                let traceDescriptors = descriptors.filter { $0.contains(url.lastPathComponent) || $0.contains(".trace") }
                XCTAssertEqual(traceDescriptors, [], "\(compiler) \(threads): the program sees the runtime's descriptor:\n"
                               + result.stdout)
                // It recorded all the same.
                XCTAssertEqual(try RecordedTrace(url).calls(named: "leaf").count, 1000, "\(compiler) \(threads)")
            }
        }
    }

    // MARK: - What daemon.c writes

    /// work(1000), work(5000) at every 100th of 2000 log lines, work(20000).
    private static let leafCalls = 1000 + 20 * 5000 + 20000

    private static let expectedDatabase = Data(repeating: UInt8(ascii: "D"), count: 65536) + Data("end\n".utf8)

    private static let expectedLog = Data((0..<2000).map { "log line \($0)\n" }.joined().utf8)

    /// The size and the first bytes that are not the program's, for a failure message.
    private static func describe(_ data: Data?) -> String {
        guard let data else { return "missing" }
        return "\(data.count) bytes, starting \(String(decoding: data.prefix(64), as: UTF8.self).debugDescription)"
    }
}
