import Foundation
import XCTest

/// The builds the tests make fixtures with: the system's gcc and the clang on PATH, each with the
/// wrappers' default instrumentation, sleds, and with -finstrument-functions' hooks
/// (CALLTRACE_INSTRUMENT=hooks). `allCases` is all four: a runtime test that loops over it runs on
/// both mechanisms (docs/design.md, "Sleds").
enum Compiler: String, CaseIterable {
    case gcc, clang
    case gccHooks = "gcc-hooks", clangHooks = "clang-hooks"

    /// The compiler's command and its C++ driver.
    var cc: String { isGcc ? "gcc" : "clang" }
    var cxx: String { isGcc ? "g++" : "clang++" }
    var isGcc: Bool { self == .gcc || self == .gccHooks }
    /// Built with -finstrument-functions' hooks rather than sleds.
    var hooks: Bool { self == .gccHooks || self == .clangHooks }
    /// CALLTRACE_INSTRUMENT for the wrapper.
    var instrument: String { hooks ? "hooks" : "sleds" }
    /// gcc's hooks instrument inlined copies of a function too (so a function inlined into another
    /// still shows up in a trace), and run exit hooks while an exception unwinds: -finstrument-functions
    /// does its work before inlining, in the source's terms. clang's hooks come after inlining, and
    /// sleds are in the machine code, after everything.
    var instrumentsInlinedCalls: Bool { self == .gccHooks }
    /// The wrapper's environment for this build (with `CALLTRACE_RUNTIME` added by the caller).
    var wrapperEnvironment: [String: String] {
        ["CALLTRACE_CC": cc, "CALLTRACE_CXX": cxx, "CALLTRACE_INSTRUMENT": instrument]
    }
}

/// A fixture program from Tests/CalltraceTests/Fixtures, compiled for this test run.
struct Fixture {
    let binary: URL
    let directory: URL

    /// Compiles `sources` (file names under Fixtures/) with Scripts/calltrace-cc and `compiler`.
    /// `wrapper: false` compiles with plain -finstrument-functions and no runtime (for `calltrace record`).
    /// `runtime` links another copy of the runtime than the built one; `in` puts the binary in a
    /// given directory instead of a fresh one under the workspace.
    static func build(_ sources: [String], compiler: Compiler, cxx: Bool = false, flags: [String] = ["-O2", "-g"],
                      wrapper: Bool = true, name: String? = nil, runtime: URL? = nil, in place: URL? = nil,
                      file: StaticString = #filePath, line: UInt = #line) throws -> Fixture {
        try Workspace.requireProducts(file: file, line: line)
        let base = name ?? (sources[0] as NSString).deletingPathExtension
        let directory = place ?? Workspace.directory("\(base)-\(compiler.rawValue)")
        let binary = directory.appendingPathComponent(base)
        let paths = sources.map { Workspace.fixtures.appendingPathComponent($0).path }
        let result: CommandResult
        if wrapper {
            let tool = cxx ? "calltrace-c++" : "calltrace-cc"
            var env = compiler.wrapperEnvironment
            env["CALLTRACE_RUNTIME"] = (runtime ?? Workspace.runtimeLibrary).path
            result = try Command.run(Workspace.packageRoot.appendingPathComponent("Scripts/\(tool)").path,
                                     flags + paths + ["-o", binary.path, "-lpthread", "-ldl"], environment: env)
        } else {
            let cc = try which(cxx ? compiler.cxx : compiler.cc)
            result = try Command.run(cc, flags + ["-finstrument-functions"] + paths + ["-o", binary.path, "-lpthread", "-ldl"])
        }
        guard result.status == 0 else {
            XCTFail("compiling \(sources) with \(compiler) failed:\n\(result)", file: file, line: line)
            throw TestFailure("fixture did not compile")
        }
        return Fixture(binary: binary, directory: directory)
    }

    /// Runs the fixture with the runtime's settings in `environment`; the trace goes to
    /// `<dir>/<name>.trace` unless CALLTRACE_OUTPUT is given.
    func run(_ arguments: [String] = [], environment: [String: String] = [:], traceName: String = "run",
             timeout: TimeInterval = 600) throws -> (result: CommandResult, trace: URL) {
        let trace = directory.appendingPathComponent("\(traceName).trace")
        try? FileManager.default.removeItem(at: trace)
        var env = ["CALLTRACE_OUTPUT": trace.path]
        env.merge(environment) { _, new in new }
        let result = try Command.run(binary.path, arguments, environment: env, currentDirectory: directory,
                                     timeout: timeout)
        return (result, trace)
    }

    /// Runs the fixture without any CALLTRACE_* setting: the runtime is loaded but was not asked
    /// to record, so the run is the program's own.
    func runUntraced(_ arguments: [String] = [], environment: [String: String] = [:],
                     timeout: TimeInterval = 600) throws -> CommandResult {
        try Command.run(binary.path, arguments, environment: environment.filter { !$0.key.hasPrefix("CALLTRACE_") },
                        currentDirectory: directory, timeout: timeout)
    }
}

/// The tool's path on PATH. A missing tool fails the test: every tool the tests run comes with
/// what Scripts/setup installs (gcc, g++, make, binutils, python3) or with the base system.
func which(_ tool: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
        let path = "\(dir)/\(tool)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw failure("\(tool) is not installed (Scripts/setup installs the tools the tests need)", file: file, line: line)
}
