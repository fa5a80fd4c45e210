import Foundation
import XCTest

/// Scripts/install into a temporary PREFIX (with this run's products, so nothing is rebuilt), then
/// used as a user would: a Makefile taking its flags from the installed calltrace.pc, the installed
/// compiler wrapper, and the installed CLI finding the installed runtime.
final class InstallTests: XCTestCase {
    /// One installation per test run, shared by the tests below.
    private static let installation: Result<URL, InstallFailure> = {
        let prefix = Workspace.directory("prefix")
        do {
            let result = try Command.run(Workspace.packageRoot.appendingPathComponent("Scripts/install").path,
                                         ["--products", Workspace.products.path, "--no-man"],
                                         environment: ["PREFIX": prefix.path])
            guard result.status == 0, result.stdout.contains("installed under \(prefix.path)") else {
                return .failure(InstallFailure("Scripts/install failed:\n\(result)"))
            }
            return .success(prefix)
        } catch {
            return .failure(InstallFailure("Scripts/install did not run: \(error)"))
        }
    }()

    private func prefix() throws -> URL {
        try Workspace.requireProducts()
        switch Self.installation {
        case .success(let prefix): return prefix
        case .failure(let error):
            XCTFail(error.message)
            throw error
        }
    }

    func testInstallsEveryPartWithAPkgConfigFileForThePrefix() throws {
        let prefix = try prefix()
        for path in ["bin/calltrace", "bin/calltrace-cc", "bin/calltrace-c++", "bin/calltrace-gcc", "bin/calltrace-g++",
                     "bin/calltrace-clang", "bin/calltrace-clang++", "lib/libcalltrace_rt.so",
                     "include/calltrace.h", "lib/pkgconfig/calltrace.pc",
                     "share/bash-completion/completions/calltrace", "share/zsh/site-functions/_calltrace",
                     "share/fish/vendor_completions.d/calltrace.fish", "share/calltrace/sleds/calltrace_gcc_sleds.cc",
                     "share/calltrace/sleds/ct_sled_module.S", "lib/calltrace/ct_sled_module.o"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(path).path), path)
        }
        // The GCC plugin, built for the system's gcc at install time (a user may not write there).
        let built = try FileManager.default.contentsOfDirectory(atPath: prefix.appendingPathComponent("lib/calltrace").path)
        XCTAssertTrue(built.contains { name in
            name.hasPrefix("gcc-") && FileManager.default.fileExists(atPath: prefix.appendingPathComponent("lib/calltrace/\(name)/calltrace_sleds.so").path)
        }, "\(built)")
        let environment = ["PKG_CONFIG_PATH": prefix.appendingPathComponent("lib/pkgconfig").path]
        let cflags = try Command.run("/usr/bin/pkg-config", ["--cflags", "calltrace"], environment: environment)
        XCTAssertEqual(cflags.status, 0, "\(cflags)")
        XCTAssertTrue(cflags.stdout.contains("-finstrument-functions"), cflags.stdout)
        XCTAssertTrue(cflags.stdout.contains("-I\(prefix.path)/include"), cflags.stdout)
        let libs = try Command.run("/usr/bin/pkg-config", ["--libs", "calltrace"], environment: environment)
        XCTAssertTrue(libs.stdout.contains("-L\(prefix.path)/lib"), libs.stdout)
        XCTAssertTrue(libs.stdout.contains("-lcalltrace_rt"), libs.stdout)
        let version = try Command.run(prefix.appendingPathComponent("bin/calltrace").path, ["--version"])
        let pcVersion = try Command.run("/usr/bin/pkg-config", ["--modversion", "calltrace"], environment: environment)
        XCTAssertEqual("calltrace " + pcVersion.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
                       version.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func testAMakefileBuildsWithPkgConfigAndTheProgramIsTraced() throws {
        let prefix = try prefix()
        let project = Workspace.directory("make-project")
        for name in ["app.c", "Makefile"] {
            try FileManager.default.copyItem(at: Workspace.fixtures.appendingPathComponent("installed/\(name)"),
                                             to: project.appendingPathComponent(name))
        }
        let environment = ["PKG_CONFIG_PATH": prefix.appendingPathComponent("lib/pkgconfig").path]
        let make = try Command.run("/usr/bin/make", ["-C", project.path], environment: environment)
        XCTAssertEqual(make.status, 0, "\(make)")
        let trace = project.appendingPathComponent("app.trace")
        let run = try Command.run(project.appendingPathComponent("app").path,
                                  environment: ["CALLTRACE_THRESHOLD": "5ms", "CALLTRACE_OUTPUT": trace.path])
        XCTAssertEqual(run.status, 0, "\(run)")
        XCTAssertEqual(run.stdout, "installed app done\n")
        try assertTraced(trace, prefix: prefix)
    }

    /// With each compiler, sleds (the default) from what the installation holds, and no warning.
    func testTheInstalledWrapperAndRecordFindTheInstalledRuntime() throws {
        let prefix = try prefix()
        for compiler in [Compiler.gcc, .clang] {
            let project = Workspace.directory("wrapper-project-\(compiler)")
            let binary = project.appendingPathComponent("app")
            // No checkout on the wrapper's path: it must take PREFIX/include and PREFIX/lib.
            let build = try Command.run(prefix.appendingPathComponent("bin/calltrace-\(compiler.cc)").path,
                                        ["-O1", "-g", Workspace.fixtures.appendingPathComponent("installed/app.c").path,
                                         "-o", binary.path])
            XCTAssertEqual(build.status, 0, "\(build)")
            XCTAssertEqual(build.stderr, "", "\(compiler)")
            let carries = try Instrumentation.carries(binary, compiler)
            XCTAssertTrue(carries.instrumented, "\(compiler): \(carries.evidence)")
            let trace = project.appendingPathComponent("app.trace")
            let record = try Command.run(prefix.appendingPathComponent("bin/calltrace").path,
                                         ["record", "-t", "5ms", "-o", trace.path, "--", binary.path])
            XCTAssertEqual(record.status, 0, "\(record)")
            XCTAssertTrue(record.stdout.contains("installed app done"), "\(record)")
            try assertTraced(trace, prefix: prefix)
        }
    }

    func testTheBashCompletionScriptParsesAndNamesTheSubcommands() throws {
        let prefix = try prefix()
        let script = prefix.appendingPathComponent("share/bash-completion/completions/calltrace")
        let syntax = try Command.run("/bin/bash", ["-n", script.path])
        XCTAssertEqual(syntax.status, 0, "\(syntax)")
        let text = try String(contentsOf: script, encoding: .utf8)
        for subcommand in ["record", "report", "timeline", "export", "exclude-list"] {
            XCTAssertTrue(text.contains(subcommand), subcommand)
        }
    }

    /// The trace shows main and the 20 ms call under it, and the mark, read by the installed CLI.
    private func assertTraced(_ trace: URL, prefix: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        let cli = prefix.appendingPathComponent("bin/calltrace").path
        let report = try Command.run(cli, ["report", trace.path])
        XCTAssertEqual(report.status, 0, "\(report)", file: file, line: line)
        let lines = report.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { treeLineName($0) == "main" }, "\(report)", file: file, line: line)
        guard let work = lines.first(where: { treeLineName($0) == "installed_work" && $0.contains("|  installed_work") }) else {
            return XCTFail("no installed_work under main:\n\(report)", file: file, line: line)
        }
        let cost = work.split(separator: "|")[1].replacingOccurrences(of: "ms", with: "")
            .trimmingCharacters(in: .whitespaces)
        XCTAssertGreaterThanOrEqual(Double(cost) ?? 0, 20, work, file: file, line: line)
        let timeline = try Command.run(cli, ["timeline", trace.path])
        XCTAssertTrue(timeline.stdout.contains("installed start"), "\(timeline)", file: file, line: line)
    }
}

private struct InstallFailure: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
