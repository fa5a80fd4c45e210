import Foundation
import XCTest

/// Scripts/setup and Scripts/put-on-path, the parts that run without building: their help, their
/// refusal of arguments they do not know, and the links that put the checkout's commands on PATH.
final class SetupScriptTests: XCTestCase {
    private func script(_ name: String) -> String {
        Workspace.packageRoot.appendingPathComponent("Scripts/\(name)").path
    }

    func testHelpPrintsTheUsageAndRunsNothing() throws {
        for name in ["setup", "put-on-path"] {
            for flag in ["--help", "-h"] {
                let dir = Workspace.directory("help-\(name)")
                let result = try Command.run(script(name), [flag], currentDirectory: dir)
                XCTAssertEqual(result.status, 0, "\(name) \(flag): \(result)")
                XCTAssertTrue(result.stdout.hasPrefix("Scripts/\(name) ["), "\(name) \(flag): \(result.stdout)")
                XCTAssertFalse(result.stdout.contains("#"), "comment markers are taken off:\n\(result.stdout)")
                XCTAssertEqual(result.stderr, "", name)
                XCTAssertFalse(result.stdout.contains("setup: checking"), "nothing ran:\n\(result.stdout)")
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "nothing made")
            }
        }
    }

    func testAnUnknownArgumentIsOneLineAndExitTwo() throws {
        for (name, arguments) in [("setup", ["--bogus"]), ("setup", ["demo"]), ("setup", ["--bin-dir"]),
                                  ("put-on-path", ["--bogus"]),
                                  ("put-on-path", ["a", "b"])] {
            let result = try Command.run(script(name), arguments)
            let label = "\(name) \(arguments.joined(separator: " "))"
            XCTAssertEqual(result.status, 2, "\(label): \(result)")
            XCTAssertEqual(result.stdout, "", label)
            XCTAssertTrue(result.stderr.hasPrefix("\(name): error: "), "\(label): \(result.stderr)")
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "\(label): one line:\n\(result.stderr)")
        }
    }

    /// The wrappers work through links in a directory on PATH, as Scripts/put-on-path makes them:
    /// linked to this checkout, found again without change on a second run, a wrapper run through
    /// its link builds with this checkout's runtime, and a file in the way is left alone.
    func testPutOnPathLinksTheWrappersAndTheyStillFindTheCheckout() throws {
        try Workspace.requireProducts()
        let bin = Workspace.directory("put-on-path").appendingPathComponent("bin")
        let putOnPath = script("put-on-path")
        let first = try Command.run(putOnPath, [bin.path])
        XCTAssertEqual(first.status, 0, first.description)
        let shown = bin.resolvingSymlinksInPath().path  // the script names the directory by its real path
        XCTAssertTrue(first.stdout.contains("put-on-path: linked calltrace, calltrace-cc, calltrace-c++, calltrace-gcc, "
                                            + "calltrace-g++, calltrace-clang, calltrace-clang++ in \(shown)"), first.stdout)
        XCTAssertTrue(first.stdout.contains("export PATH=\"\(shown):$PATH\""), "not on PATH: the line to add\n\(first.stdout)")
        let root = Workspace.packageRoot.resolvingSymlinksInPath().path
        for name in ["calltrace-cc", "calltrace-c++", "calltrace-gcc", "calltrace-g++", "calltrace-clang", "calltrace-clang++"] {
            let target = try FileManager.default.destinationOfSymbolicLink(atPath: bin.appendingPathComponent(name).path)
            XCTAssertEqual(target, "\(root)/Scripts/\(name)")
        }
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: bin.appendingPathComponent("calltrace").path),
                       "\(root)/.build/release/calltrace")

        let again = try Command.run(putOnPath, [bin.path],
                                    environment: ["PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")])
        XCTAssertEqual(again.status, 0, again.description)
        XCTAssertFalse(again.stdout.contains("linked"), "nothing to do the second time:\n\(again)")
        XCTAssertFalse(again.stdout.contains("not on PATH"), again.stdout)

        // Through its link (two: bin/calltrace-gcc, Scripts/calltrace-gcc), without CALLTRACE_RUNTIME: the
        // checkout's runtime.
        let dir = Workspace.directory("put-on-path-build")
        let source = Workspace.fixtures.appendingPathComponent("nested.c").path
        let built = try Command.run(bin.appendingPathComponent("calltrace-gcc").path, ["-O2", source, "-o", "nested"],
                                    environment: ["CALLTRACE_RUNTIME": "", "CALLTRACE_CACHE": dir.appendingPathComponent("cache").path],
                                    currentDirectory: dir)
        XCTAssertEqual(built.status, 0, built.description)
        let ldd = try Command.run(try which("ldd"), [dir.appendingPathComponent("nested").path])
        XCTAssertTrue(ldd.stdout.contains("\(root)/.build/") && ldd.stdout.contains("libcalltrace_rt.so"), ldd.stdout)
        let trace = dir.appendingPathComponent("nested.trace")
        let run = try Command.run(dir.appendingPathComponent("nested").path,
                                  environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_OUTPUT": trace.path])
        XCTAssertEqual(run.status, 0, run.description)
        XCTAssertFalse(try RecordedTrace(trace).calls.isEmpty, "the program built through the link records")

        // A file that is not a link into a calltrace checkout stays.
        let installed = bin.appendingPathComponent("calltrace-c++")
        try FileManager.default.removeItem(at: installed)
        try "#!/bin/sh\n".write(to: installed, atomically: true, encoding: .utf8)
        let kept = try Command.run(putOnPath, [bin.path])
        XCTAssertEqual(kept.status, 0, kept.description)
        XCTAssertTrue(kept.stderr.contains("warning: left \(shown)/calltrace-c++ as it is"), kept.stderr)
        XCTAssertEqual(try String(contentsOf: installed, encoding: .utf8), "#!/bin/sh\n")
    }
}
