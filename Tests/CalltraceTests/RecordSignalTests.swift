import Foundation
import XCTest

/// A program that signals its own process group does not take `calltrace record` down with it:
/// record waits, exits with the program's status and says where the trace went. And the program
/// starts with the signal dispositions it would have had without calltrace.
final class RecordSignalTests: XCTestCase {
    func testGroupSignalsEndTheProgramButNotRecord() throws {
        let fixture = try Fixture.build(["signal_group.c"], compiler: .gcc, wrapper: false)
        let signals: [(String, Int32)] = [("SIGTERM", SIGTERM), ("SIGHUP", SIGHUP), ("SIGINT", SIGINT),
                                          ("SIGUSR1", SIGUSR1), ("SIGQUIT", SIGQUIT), ("SIGPIPE", SIGPIPE),
                                          ("SIGALRM", SIGALRM), ("SIGRTMIN+2", __libc_current_sigrtmin() + 2)]
        for (name, signal) in signals {
            let dir = Workspace.directory("record-group-\(signal)")
            let result = try RecordCommand.run(["-o", "app.trace"], [fixture.binary.path, String(signal)],
                                               environment: ["SWIFT_BACKTRACE": "enable=no"], in: dir)
            XCTAssertEqual(result.status, 128 + signal, "\(name): the program's status:\n\(result)")
            XCTAssertEqual(result.stdout, "signalling group with \(signal)\n", name)
            XCTAssertTrue(result.stderr.contains("calltrace: trace written to app.trace (1 call recorded)"),
                          "\(name): record lived to say where the trace went:\n\(result.stderr)")
            let trace = try RecordedTrace(dir.appendingPathComponent("app.trace"))
            XCTAssertEqual(trace.calls(named: "busy_step").count, 1, "\(name):\n\(trace.tree)")
            XCTAssertEqual(RecordCommand.files(in: dir), ["app.trace"], name)
        }
    }

    func testProgramStartsWithTheSignalDispositionsItWouldHaveWithoutCalltrace() throws {
        let dir = Workspace.directory("record-dispositions")
        let sh = try which("sh"), grep = try which("grep"), setsid = try which("setsid")
        let status = "grep -E '^Sig(Ign|Blk):' /proc/self/status"
        // With nothing ignored, and with SIGINT and SIGHUP ignored by the parent (as under nohup):
        // the program must inherit exactly that, with and without calltrace in between.
        for traps in ["", "trap '' INT HUP; "] {
            let direct = try Command.run(sh, ["-c", "\(traps)exec \(setsid) -w \(status)"], currentDirectory: dir)
            let recorded = try Command.run(sh, ["-c", "\(traps)exec \(setsid) -w \(Workspace.cli.path) record -o grep.trace "
                                                + "-- \(grep) -E '^Sig(Ign|Blk):' /proc/self/status"],
                                           currentDirectory: dir)
            XCTAssertEqual(recorded.status, 0, recorded.description)
            XCTAssertEqual(Self.masks(recorded.stdout), Self.masks(direct.stdout), "\(traps)\n\(recorded)\n\(direct)")
            XCTAssertEqual(Self.masks(direct.stdout)["SigIgn"].map { $0 & 0x3 == 0x3 }, !traps.isEmpty, direct.stdout)
        }
    }

    /// The SigIgn and SigBlk masks of a /proc status, without glibc's two internal signals (32 and
    /// 33): glibc's posix_spawn ignores them in every program it starts, so whether they arrive
    /// ignored depends on how each launcher was started, not on calltrace.
    private static func masks(_ status: String) -> [String: UInt64] {
        var masks: [String: UInt64] = [:]
        for line in status.split(separator: "\n") {
            let parts = line.split(separator: ":")
            guard parts.count == 2, let mask = UInt64(parts[1].trimmingCharacters(in: .whitespaces), radix: 16) else { continue }
            masks[String(parts[0])] = mask & ~(UInt64(0x3) << 31)
        }
        return masks
    }
}
