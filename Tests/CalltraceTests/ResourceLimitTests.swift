import CalltraceKit
import Foundation
import XCTest

/// A full file system or RLIMIT_FSIZE must not kill the traced program (no SIGBUS from stores into
/// unbacked trace blocks, no SIGXFSZ from growing the file): records that find no room are
/// dropped, counted, and the trace says why.
final class ResourceLimitTests: XCTestCase {
    /// burst.c makes this many calls at threshold 0: several megabytes of records.
    private static let calls = 200_000

    func testFileSizeLimitDoesNotKillTheProgram() throws {
        let prlimit = try which("prlimit")
        let plain = try Fixture.build(["burst.c"], compiler: .gcc, wrapper: false, name: "burst_plain")
        let traced = try Fixture.build(["burst.c"], compiler: .gcc)
        let limit = 512 << 10  // room for the header and some blocks, not for all 200,000 records
        let untraced = try Command.run(prlimit, ["--fsize=\(limit)", "--", plain.binary.path, "\(Self.calls)"],
                                       currentDirectory: plain.directory, timeout: 120)
        XCTAssertEqual(untraced.status, 0, untraced.description)
        for threads in ["main", "all"] {
            let trace = traced.directory.appendingPathComponent("fsize-\(threads).trace")
            let result = try Command.run(prlimit, ["--fsize=\(limit)", "--", traced.binary.path, "\(Self.calls)"],
                                         environment: ["CALLTRACE_OUTPUT": trace.path, "CALLTRACE_THRESHOLD": "0",
                                                       "CALLTRACE_THREADS": threads],
                                         currentDirectory: traced.directory, timeout: 120)
            assertDidNotHang(result, threads)
            XCTAssertNil(result.signal, "\(threads): killed (SIGXFSZ is \(SIGXFSZ)): \(result)")
            XCTAssertEqual(result.status, untraced.status, "\(threads): \(result)")
            XCTAssertEqual(result.stdout, untraced.stdout, threads)
            try assertReadsWithDrops(trace, limit: limit, lostBit: TraceFormat.Lost.fileLimit, warning: "RLIMIT_FSIZE",
                                     label: "\(threads) file size limit")
        }
    }

    func testFullFileSystemDoesNotKillTheProgram() throws {
        let unshare = try which("unshare")
        let plain = try Fixture.build(["burst.c"], compiler: .gcc, wrapper: false, name: "burst_plain")
        let traced = try Fixture.build(["burst.c"], compiler: .gcc)
        let untraced = try Command.run(plain.binary.path, ["\(Self.calls)"], timeout: 120)
        XCTAssertEqual(untraced.status, 0, untraced.description)
        for threads in ["main", "all"] {
            let mount = Workspace.directory("tmpfs-\(threads)"), saved = Workspace.directory("tmpfs-saved-\(threads)")
            // In a mount namespace of its own: a 256 KiB tmpfs, the program writing its trace there,
            // then the trace copied out before the namespace (and the tmpfs) goes away. 99: no tmpfs.
            let script = """
                mount -t tmpfs -o size=256k calltrace-test "$1" || exit 99
                "$2" "$3"; status=$?
                cp "$1"/full.trace "$4"/ 2>/dev/null
                exit $status
                """
            let environment = ["CALLTRACE_OUTPUT": mount.appendingPathComponent("full.trace").path,
                               "CALLTRACE_THRESHOLD": "0", "CALLTRACE_THREADS": threads]
            var result = try Command.run(unshare, (getuid() == 0 ? ["-m"] : ["-rm"]) + ["sh", "-c", script, "sh", mount.path,
                                         traced.binary.path, "\(Self.calls)", saved.path],
                                         environment: environment, timeout: 120)
            if result.status != 0 && getuid() == 0 {
                // Root without CAP_SYS_ADMIN (a container): a user namespace may still allow it.
                result = try Command.run(unshare, ["-rm", "sh", "-c", script, "sh", mount.path, traced.binary.path,
                                                   "\(Self.calls)", saved.path], environment: environment, timeout: 120)
            }
            if result.status == 99 || (result.status == 1 && result.stderr.contains("unshare")) {
                throw XCTSkip("cannot mount a tmpfs in a mount namespace here: \(result.stderr)")
            }
            assertDidNotHang(result, threads)
            // sh reports the program's death by signal as 128 + N.
            XCTAssertEqual(result.status, untraced.status, "\(threads): SIGBUS is \(SIGBUS): \(result)")
            XCTAssertEqual(result.stdout, untraced.stdout, threads)
            try assertReadsWithDrops(saved.appendingPathComponent("full.trace"), limit: 256 << 10,
                                     lostBit: TraceFormat.Lost.noSpace, warning: "no room", label: "\(threads) full file system")
        }
    }

    /// The trace stops growing while 5 % of the file system is still free (at most 1 GiB), so the
    /// program's own writes still find room: on a 4 MiB tmpfs a threshold-0 trace of several
    /// megabytes stops with about 205 KiB free, and the program then writes a file of 150 KiB there.
    func testTraceLeavesTheProgramItsShareOfTheFileSystem() throws {
        let unshare = try which("unshare")
        let traced = try Fixture.build(["burst.c"], compiler: .gcc)
        let mount = Workspace.directory("tmpfs-share"), saved = Workspace.directory("tmpfs-share-saved")
        let script = """
            mount -t tmpfs -o size=4m calltrace-test "$1" || exit 99
            "$2" "$3" > /dev/null; status=$?
            head -c 153600 /dev/zero > "$1"/program-file || status=98
            cp "$1"/share.trace "$4"/ 2>/dev/null
            exit $status
            """
        let environment = ["CALLTRACE_OUTPUT": mount.appendingPathComponent("share.trace").path, "CALLTRACE_THRESHOLD": "0"]
        let result = try Command.run(unshare, ["-m", "sh", "-c", script, "sh", mount.path, traced.binary.path,
                                               "\(Self.calls * 4)", saved.path], environment: environment, timeout: 120)
        XCTAssertEqual(result.status, 0, "98: the program found no room for its own file: \(result)")
        try assertReadsWithDrops(saved.appendingPathComponent("share.trace"), limit: 4 << 20,
                                 lostBit: TraceFormat.Lost.noSpace, warning: "leaves 5 %", label: "share of a tmpfs")
    }

    /// The trace, if the runtime could make one, is no bigger than the room it had, says why
    /// records were lost (the `lost` bit), reads without an error, and its report says that calls
    /// were dropped and why (`warning`).
    private func assertReadsWithDrops(_ trace: URL, limit: Int, lostBit: UInt32, warning: String, label: String,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        var info = stat()
        guard stat(trace.path, &info) == 0 else {
            return  // no trace at all is allowed: the program's run is what counts
        }
        // What the file occupies (it may be sparse beyond that).
        XCTAssertLessThanOrEqual(Int(info.st_blocks) * 512, limit, "\(label): \(info.st_size) bytes", file: file, line: line)
        let lost = try TraceReader.read(path: trace.path).header.lost
        XCTAssertNotEqual(lost & lostBit, 0, "\(label): lost bits \(String(lost, radix: 2))", file: file, line: line)
        let report = try calltrace(["report", trace.path])
        XCTAssertEqual(report.status, 0, "\(label): \(report)", file: file, line: line)
        XCTAssertTrue(report.stderr.contains("dropped"), "\(label): no word of the dropped records:\n\(report.stderr)",
                      file: file, line: line)
        XCTAssertTrue(report.stderr.contains(warning), "\(label): no word of why ('\(warning)'):\n\(report.stderr)",
                      file: file, line: line)
        XCTAssertFalse(report.stderr.contains("error"), "\(label): \(report.stderr)", file: file, line: line)
        XCTAssertFalse(report.stdout.isEmpty, "\(label): the records kept are shown", file: file, line: line)
    }
}
