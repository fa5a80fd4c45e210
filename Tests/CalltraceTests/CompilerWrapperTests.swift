import Foundation
import XCTest

/// Scripts/calltrace-cc behaves as the compiler it wraps wherever the runtime has no business: queries
/// about the compiler, `-v` without inputs, relocatable links. `-static` is refused in one line.
final class CompilerWrapperTests: XCTestCase {
    /// Runs the wrapper (C or C++) with `compiler` behind it, in `directory`. The compiler is named
    /// by the same path as in `plain`, since some print the name they were run by.
    private func wrapper(_ arguments: [String], compiler: Compiler, cxx: Bool = false, in directory: URL) throws
        -> CommandResult {
        try Workspace.requireProducts()
        let tool = Workspace.packageRoot.appendingPathComponent(cxx ? "Scripts/calltrace-c++" : "Scripts/calltrace-cc")
        return try Command.run(tool.path, arguments,
                               environment: ["CALLTRACE_CC": try which(compiler.rawValue),
                                             "CALLTRACE_CXX": try which(compiler.cxx),
                                             "CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path],
                               currentDirectory: directory)
    }

    private func plain(_ arguments: [String], compiler: Compiler, cxx: Bool = false, in directory: URL) throws
        -> CommandResult {
        try Command.run(try which(cxx ? compiler.cxx : compiler.rawValue), arguments, currentDirectory: directory)
    }

    func testQueriesPrintWhatTheCompilerPrints() throws {
        let queries: [[String]] = [["--version"], ["-dumpversion"], ["-dumpmachine"], ["-print-file-name=libc.so"],
                                   ["-print-prog-name=ld"], ["-print-search-dirs"], ["-print-libgcc-file-name"]]
        for compiler in Compiler.allCases {
            for cxx in [false, true] {
                let dir = Workspace.directory("wrapper-query-\(compiler)")
                for query in queries {
                    let wrapped = try wrapper(query, compiler: compiler, cxx: cxx, in: dir)
                    let direct = try plain(query, compiler: compiler, cxx: cxx, in: dir)
                    let label = "\(compiler)\(cxx ? " c++" : "") \(query)"
                    XCTAssertEqual(wrapped.status, direct.status, "\(label):\n\(wrapped)")
                    XCTAssertEqual(wrapped.stdout, direct.stdout, label)
                    XCTAssertEqual(wrapped.stderr, direct.stderr, label)
                }
                XCTAssertEqual(traceFiles(in: dir), [], "queries run nothing")
            }
        }
    }

    func testVerboseWithoutInputsBehavesAsTheCompiler() throws {
        for compiler in Compiler.allCases {
            let dir = Workspace.directory("wrapper-v-\(compiler)")
            let wrapped = try wrapper(["-v"], compiler: compiler, in: dir)
            let direct = try plain(["-v"], compiler: compiler, in: dir)
            XCTAssertEqual(direct.status, 0, "\(compiler) -v:\n\(direct)")
            XCTAssertEqual(wrapped.status, 0, "\(compiler) -v through the wrapper:\n\(wrapped)")
            XCTAssertEqual(wrapped.stdout, direct.stdout, "\(compiler)")
            XCTAssertEqual(wrapped.stderr, direct.stderr, "\(compiler): the same report, no link attempted")
            XCTAssertFalse(wrapped.stderr.contains("calltrace_rt"), wrapped.stderr)
        }
    }

    func testVerboseWithAnInputStillLinksTheRuntime() throws {
        let dir = Workspace.directory("wrapper-v-input")
        let source = Workspace.fixtures.appendingPathComponent("nested.c").path
        let result = try wrapper(["-v", "-O2", source, "-o", "nested"], compiler: .gcc, in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        let ldd = try Command.run(try which("ldd"), [dir.appendingPathComponent("nested").path])
        XCTAssertTrue(ldd.stdout.contains("libcalltrace_rt.so"), ldd.stdout)
    }

    func testRelocatableLinkGetsInstrumentationButNoRuntime() throws {
        let src = Workspace.fixtures.appendingPathComponent("twofile")
        for compiler in Compiler.allCases {
            let dir = Workspace.directory("wrapper-r-\(compiler)")
            for name in ["app", "util"] {
                let compiled = try wrapper(["-O2", "-c", src.appendingPathComponent("\(name).c").path, "-o", "\(name).o"],
                                           compiler: compiler, in: dir)
                XCTAssertEqual(compiled.status, 0, compiled.description)
            }
            let linked = try wrapper(["-r", "app.o", "util.o", "-o", "both.o"], compiler: compiler, in: dir)
            XCTAssertEqual(linked.status, 0, "\(compiler) -r:\n\(linked)")
            let both = dir.appendingPathComponent("both.o").path
            let header = try Command.run(try which("readelf"), ["-h", both])
            XCTAssertTrue(header.stdout.contains("REL (Relocatable file)"), header.stdout)
            let undefined = try Command.run(try which("nm"), ["-u", both])
            XCTAssertTrue(undefined.stdout.contains("__cyg_profile_func_enter"), undefined.stdout)
            let dynamic = try Command.run(try which("readelf"), ["-d", both])
            XCTAssertFalse(dynamic.stdout.contains("calltrace_rt"), "no runtime in a relocatable object:\n\(dynamic.stdout)")
        }
    }

    func testStaticLinkIsRefusedInOneLine() throws {
        let source = Workspace.fixtures.appendingPathComponent("nested.c").path
        for compiler in Compiler.allCases {
            for cxx in [false, true] {
                let dir = Workspace.directory("wrapper-static-\(compiler)")
                for flag in ["-static", "-static-pie"] {
                    let result = try wrapper(["-O2", flag, "-x", "c", source, "-o", "nested"], compiler: compiler,
                                             cxx: cxx, in: dir)
                    XCTAssertEqual(result.status, 1, result.description)
                    let tool = cxx ? "calltrace-c++" : "calltrace-cc"
                    XCTAssertTrue(result.stderr.hasPrefix("\(tool): error: -static cannot be traced"), result.stderr)
                    XCTAssertTrue(result.stderr.contains("shared library"), result.stderr)
                    XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "one line:\n\(result.stderr)")
                    XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("nested").path))
                }
            }
        }
    }

    func testStaticIsHarmlessWhenOnlyCompiling() throws {
        let dir = Workspace.directory("wrapper-static-c")
        let source = Workspace.fixtures.appendingPathComponent("nested.c").path
        let result = try wrapper(["-O2", "-static", "-c", source, "-o", "nested.o"], compiler: .gcc, in: dir)
        XCTAssertEqual(result.status, 0, result.description)
        let undefined = try Command.run(try which("nm"), ["-u", dir.appendingPathComponent("nested.o").path])
        XCTAssertTrue(undefined.stdout.contains("__cyg_profile_func_enter"), undefined.stdout)
    }
}
