@testable import CalltraceKit
import Foundation
import XCTest

/// Stripped programs with separate debug files (`objcopy --only-keep-debug`, `strip --strip-all`):
/// `report --lines` names their static functions and gives the lines gdb gives on the
/// unstripped program, whichever way the debug file is found (gdb's: next to the program through
/// `.gnu_debuglink`, in its `.debug/` directory, by build-id under a debug directory that
/// CALLTRACE_DEBUG_DIR names), and refuses a debug file of another build.
final class DebugFileTests: XCTestCase {
    /// static_calls.c: three static functions under main; .dynsym names none of them.
    private let functions = ["main", "outer_loop", "middle_step", "leaf_sum"]

    private struct Stripped {
        let fixture: Fixture
        /// The program before stripping, for gdb.
        let unstripped: URL
        /// Its symbols and DWARF, `<name>.debug` next to it.
        let debugFile: URL
        let buildID: String
    }

    /// static_calls.c built with gcc -O2 -g (and `flags`), its debug information moved to
    /// `<name>.debug` next to it, then stripped of every symbol table but .dynsym.
    private func strippedProgram(_ name: String, flags: [String] = []) throws -> Stripped {
        let fixture = try Fixture.build(["static_calls.c"], compiler: .gcc, flags: ["-O2", "-g"] + flags, name: name)
        let unstripped = fixture.directory.appendingPathComponent("\(name).unstripped")
        try place(fixture.binary, at: unstripped, moving: false)
        let debugFile = fixture.directory.appendingPathComponent("\(name).debug")
        try tool("objcopy", ["--only-keep-debug", fixture.binary.path, debugFile.path])
        try tool("strip", ["--strip-all", fixture.binary.path])
        let image = try ElfImage(path: fixture.binary.path)
        XCTAssertFalse(image.hasSymtab, "strip --strip-all left .symtab")
        XCTAssertFalse(image.hasDwarf, "strip --strip-all left DWARF")
        return Stripped(fixture: fixture, unstripped: unstripped, debugFile: debugFile,
                        buildID: TextFormat.hexDigits(image.buildID))
    }

    private func tool(_ name: String, _ arguments: [String], in directory: URL? = nil) throws {
        let result = try Command.run(try which(name), arguments, currentDirectory: directory)
        XCTAssertEqual(result.status, 0, "\(name) \(arguments): \(result)")
    }

    /// `objcopy --add-gnu-debuglink=PATH`: records PATH's base name and its CRC-32.
    private func addDebugLink(_ program: Stripped, to debugFile: URL) throws {
        try tool("objcopy", ["--add-gnu-debuglink=\(debugFile.path)", program.fixture.binary.path])
    }

    /// Replaces whatever is at `destination` (making its directory) by `file`, moved or copied.
    private func place(_ file: URL, at destination: URL, moving: Bool) throws {
        try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(),
                                                withIntermediateDirectories: true)
        try? FileManager.default.removeItem(at: destination)
        if moving {
            try FileManager.default.moveItem(at: file, to: destination)
        } else {
            try FileManager.default.copyItem(at: file, to: destination)
        }
    }

    /// Where gdb looks for the program's debug file by build-id: `root/.build-id/xx/rest.debug`.
    private func buildIDPath(under root: URL, of program: Stripped) -> URL {
        root.appendingPathComponent(".build-id/\(program.buildID.prefix(2))/\(program.buildID.dropFirst(2)).debug")
    }

    /// A threshold-0 trace of the stripped program, and `report --lines` of it.
    private func report(_ program: Stripped, environment: [String: String] = [:]) throws -> CommandResult {
        let (run, trace) = try program.fixture.run(environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_MUTE": "off"])
        XCTAssertEqual(run.status, 0, run.description)
        return try calltrace(["report", "--lines", trace.path], environment: environment)
    }

    private func assertNamedWithLines(_ result: CommandResult, _ program: Stripped,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(result.status, 0, result.description, file: file, line: line)
        XCTAssertEqual(result.stderr, "", "no warning when the debug file is found", file: file, line: line)
        let rows = SourceLocations.reported(result.stdout)
        let calls = ["main", "outer_loop"] + (0..<3).flatMap { _ in ["middle_step", "leaf_sum"] }
        XCTAssertEqual(rows.map(\.name), calls, result.stdout, file: file, line: line)
        let expected = try SourceLocations.entryLines(functions, in: program.unstripped, file: file, line: line)
        for row in rows {
            XCTAssertEqual(row.location, expected[row.name], "\(row.name):\n\(result.stdout)", file: file, line: line)
        }
    }

    /// Without a usable debug file a stripped program's functions are `module+0xoffset`, with one warning.
    private func assertUnnamed(_ result: CommandResult, _ program: Stripped,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, 0, result.description, file: file, line: line)
        let rows = SourceLocations.reported(result.stdout)
        XCTAssertEqual(rows.count, 8, result.stdout, file: file, line: line)
        let module = program.fixture.binary.lastPathComponent
        XCTAssertTrue(rows.allSatisfy { $0.name.hasPrefix("\(module)+0x") && $0.location == nil }, result.stdout,
                      file: file, line: line)
        XCTAssertTrue(result.stderr.contains("has no symbol table (stripped, and no matching debug file was found)"),
                      result.stderr, file: file, line: line)
    }

    func testDebugLinkToAFileNextToTheProgram() throws {
        let program = try strippedProgram("debuglink-next")
        try addDebugLink(program, to: program.debugFile)
        try assertNamedWithLines(try report(program), program)
    }

    func testDebugLinkToAFileInTheDotDebugDirectory() throws {
        let program = try strippedProgram("debuglink-dot-debug")
        let moved = program.fixture.directory.appendingPathComponent(".debug/\(program.debugFile.lastPathComponent)")
        try place(program.debugFile, at: moved, moving: true)
        try addDebugLink(program, to: moved)
        try assertNamedWithLines(try report(program), program)
    }

    /// No debuglink: only the build-id leads to the file, under the directory CALLTRACE_DEBUG_DIR
    /// names (the second of two); without it, /usr/lib/debug has nothing for this program.
    func testBuildIDUnderTheDebugDirectoryCalltraceDebugDirNames() throws {
        let program = try strippedProgram("build-id")
        XCTAssertEqual(program.buildID.count, 40, "gcc links a SHA-1 build-id by default")
        let root = program.fixture.directory.appendingPathComponent("debug-root")
        try place(program.debugFile, at: buildIDPath(under: root, of: program), moving: true)
        let elsewhere = program.fixture.directory.appendingPathComponent("empty-root").path
        try assertNamedWithLines(try report(program, environment: ["CALLTRACE_DEBUG_DIR": "\(elsewhere):\(root.path)"]),
                                 program)
        assertUnnamed(try report(program), program)
    }

    /// A debug file of another build (VARIANT: another build-id), where both the build-id path
    /// and the debuglink lead, is not this program's.
    func testDebugFileOfAnotherBuildIsRefused() throws {
        let program = try strippedProgram("other-build")
        let other = try strippedProgram("other-build-variant", flags: ["-DVARIANT"])
        XCTAssertNotEqual(program.buildID, other.buildID)
        try addDebugLink(program, to: program.debugFile)
        try place(other.debugFile, at: program.debugFile, moving: false)
        let root = program.fixture.directory.appendingPathComponent("debug-root")
        try place(other.debugFile, at: buildIDPath(under: root, of: program), moving: false)
        assertUnnamed(try report(program, environment: ["CALLTRACE_DEBUG_DIR": root.path]), program)
    }

    /// A program linked without a build-id: the debuglink's CRC-32 tells its debug file from
    /// another build's of the same name.
    func testWithoutBuildIDTheDebugLinkCRCDecides() throws {
        let program = try strippedProgram("no-build-id", flags: ["-Wl,--build-id=none"])
        XCTAssertEqual(program.buildID, "")
        try addDebugLink(program, to: program.debugFile)
        try assertNamedWithLines(try report(program), program)

        let other = try strippedProgram("no-build-id-variant", flags: ["-Wl,--build-id=none", "-DVARIANT"])
        try place(other.debugFile, at: program.debugFile, moving: false)
        assertUnnamed(try report(program), program)
    }

    /// CALLTRACE_DEBUG_DIR lists directories as gdb's debug-file-directory does; unset or empty,
    /// the directory is /usr/lib/debug.
    func testCalltraceDebugDirIsAColonSeparatedList() {
        XCTAssertEqual(DebugFileLocator.roots(fromEnvironment: nil), ["/usr/lib/debug"])
        XCTAssertEqual(DebugFileLocator.roots(fromEnvironment: ""), ["/usr/lib/debug"])
        XCTAssertEqual(DebugFileLocator.roots(fromEnvironment: "/a"), ["/a"])
        XCTAssertEqual(DebugFileLocator.roots(fromEnvironment: "/a::/b/c:"), ["/a", "/b/c"])
    }
}
