import CalltraceKit
import Foundation
import XCTest

/// The trace file is private, never follows a symlink or replaces a file, and set-id programs
/// ignore CALLTRACE_* entirely.
final class SecurityTests: XCTestCase {
    func testTraceFileIsCreatedWithMode0600() throws {
        let fixture = try Fixture.build(["secure.c"], compiler: .gcc)
        let trace = fixture.directory.appendingPathComponent("mode.trace")
        // Even under umask 0 the trace is for its owner only.
        let result = try Command.run("/bin/sh", ["-c", "umask 0; exec \"$0\"", fixture.binary.path],
                                     environment: ["CALLTRACE_OUTPUT": trace.path],
                                     currentDirectory: fixture.directory)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(fileMode(trace).map { String($0, radix: 8) }, "600")
        XCTAssertEqual(try RecordedTrace(trace).outline, ["main", "  slow_step"])
    }

    func testTraceNeverFollowsASymlinkPlantedAtItsPath() throws {
        let fixture = try Fixture.build(["secure.c"], compiler: .gcc)
        let dir = fixture.directory
        let victim = dir.appendingPathComponent("victim.txt")
        let original = Data("precious victim data\n".utf8)
        try original.write(to: victim)
        let victimBefore = FileSnapshot(victim)
        let link = dir.appendingPathComponent("out.trace")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
        // A dangling link too: it must not create its target.
        let missing = dir.appendingPathComponent("not-there.txt")
        let dangling = dir.appendingPathComponent("dangling.trace")
        try FileManager.default.createSymbolicLink(at: dangling, withDestinationURL: missing)

        for (path, label) in [(link, "link to victim"), (dangling, "dangling link")] {
            let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": path.path])
            XCTAssertEqual(result.status, 0, "\(label): \(result)")
            XCTAssertTrue(isSymlink(path), "\(label): the link is left alone")
            let alternative = dir.appendingPathComponent(path.deletingPathExtension().lastPathComponent + "-1.trace")
            XCTAssertFalse(isSymlink(alternative))
            XCTAssertEqual(try RecordedTrace(alternative).outline, ["main", "  slow_step"], label)
        }
        assertUnchanged(victimBefore, "the victim")
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing.path), "the dangling link's target was created")
    }

    /// A symlink to a directory at the output path is not followed either: nothing is created in
    /// the directory it points to, and the program runs as it would.
    func testTraceNeverFollowsASymlinkToADirectory() throws {
        let fixture = try Fixture.build(["secure.c"], compiler: .gcc)
        let dir = fixture.directory
        for name in ["out.trace", "traces"] {
            let target = Workspace.directory("symlink-target")
            let link = dir.appendingPathComponent(name)
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
            let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": link.path], timeout: 60)
            XCTAssertEqual(result.status, 0, "\(name): \(result)")
            XCTAssertTrue(result.stdout.hasPrefix("secure: uid "), "\(name): \(result)")
            XCTAssertTrue(isSymlink(link), "\(name): the link is left alone")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: target.path), [],
                           "\(name): the trace was created inside the link's target")
        }
    }

    func testTraceNeverReplacesAnExistingFile() throws {
        let fixture = try Fixture.build(["secure.c"], compiler: .gcc)
        let dir = fixture.directory
        let taken = dir.appendingPathComponent("out.trace"), alsoTaken = dir.appendingPathComponent("out-1.trace")
        let first = Data("not a trace, not yours\n".utf8), second = Data("nor this one\n".utf8)
        try first.write(to: taken)
        try second.write(to: alsoTaken)
        let takenBefore = FileSnapshot(taken), alsoTakenBefore = FileSnapshot(alsoTaken)
        let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": taken.path])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stderr, "", "taking the next free name is not worth a warning")
        assertUnchanged(takenBefore)
        assertUnchanged(alsoTakenBefore)
        XCTAssertEqual(traceFiles(in: dir), ["out-1.trace", "out-2.trace", "out.trace"])
        XCTAssertEqual(try RecordedTrace(dir.appendingPathComponent("out-2.trace")).outline, ["main", "  slow_step"])
    }

    /// A set-uid program must ignore CALLTRACE_* (the runtime reads them with secure_getenv), and
    /// so, like any program run without settings, record nothing and create nothing where the
    /// invoking user could redirect it. As root, running a program set-uid to nobody makes
    /// euid != ruid, so the kernel sets AT_SECURE.
    func testSetuidProgramIgnoresCalltraceSettingsAndCreatesNothing() throws {
        guard let nobody = getpwnam("nobody")?.pointee.pw_uid else { throw XCTSkip("no user nobody") }
        try assertSettingsIgnored(owner: nobody, group: 0, mode: 0o4755, expect: "euid \(nobody) ")
    }

    /// The same for set-gid: egid != rgid sets AT_SECURE too.
    func testSetgidProgramIgnoresCalltraceSettingsAndCreatesNothing() throws {
        guard let nogroup = getgrnam("nogroup")?.pointee.gr_gid else { throw XCTSkip("no group nogroup") }
        try assertSettingsIgnored(owner: 0, group: nogroup, mode: 0o2755, expect: "egid \(nogroup) ")
    }

    /// Runs a copy of secure.c owned by owner:group with `mode`, with CALLTRACE_* set two ways
    /// (an output path elsewhere, and only a threshold: the default name in the working directory):
    /// neither creates a file. Everything the set-id program needs (binary, runtime, working
    /// directory) is in directories under /tmp that any user can reach, wherever the clone lives.
    private func assertSettingsIgnored(owner: uid_t, group: gid_t, mode: mode_t, expect: String,
                                       file: StaticString = #filePath, line: UInt = #line) throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to make a set-id program owned by someone else") }
        try Workspace.requireProducts(file: file, line: line)
        let dir = Workspace.publicDirectory("setid")
        let runtime = dir.appendingPathComponent("libcalltrace_rt.so")
        try FileManager.default.copyItem(at: Workspace.runtimeLibrary, to: runtime)
        XCTAssertEqual(chmod(runtime.path, 0o755), 0, file: file, line: line)
        let fixture = try Fixture.build(["secure.c"], compiler: .gcc, runtime: runtime, in: dir, file: file, line: line)
        // chown first: it clears the set-id bits.
        guard chown(fixture.binary.path, owner, group) == 0, chmod(fixture.binary.path, mode) == 0 else {
            throw XCTSkip("cannot make a set-id program here: \(String(cString: strerror(errno)))")
        }
        let elsewhere = Workspace.publicDirectory("setid-output")
        let ignored = elsewhere.appendingPathComponent("ignored.trace")
        let settings: [(label: String, environment: [String: String])] = [
            ("CALLTRACE_OUTPUT elsewhere", ["CALLTRACE_OUTPUT": ignored.path, "CALLTRACE_THRESHOLD": "0",
                                            "CALLTRACE_THREADS": "bogus"]),
            ("the default name", ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_THREADS": "all"]),
        ]
        for (label, environment) in settings {
            let before = Set((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
            let result = try Command.run(fixture.binary.path, [], environment: environment, currentDirectory: dir,
                                         timeout: 60)
            XCTAssertEqual(result.status, 0, "\(label): \(result)", file: file, line: line)
            guard result.stdout.contains(expect) else {
                throw XCTSkip("the set-id bit had no effect here (nosuid mount?): \(result.stdout)")
            }
            XCTAssertEqual(result.stderr, "", "\(label): ignored settings are not even parsed", file: file, line: line)
            let after = Set((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
            XCTAssertEqual(after.subtracting(before).sorted(), [], "\(label): files created in the working directory",
                           file: file, line: line)
            XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: elsewhere.path)) ?? [], [],
                           "\(label): CALLTRACE_OUTPUT was used", file: file, line: line)
        }
    }
}
