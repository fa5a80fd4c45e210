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
                               environment: ["CALLTRACE_CC": try which(compiler.cc),
                                             "CALLTRACE_CXX": try which(compiler.cxx),
                                             "CALLTRACE_INSTRUMENT": compiler.instrument,
                                             "CALLTRACE_RUNTIME": Workspace.runtimeLibrary.path],
                               currentDirectory: directory)
    }

    private func plain(_ arguments: [String], compiler: Compiler, cxx: Bool = false, in directory: URL) throws
        -> CommandResult {
        try Command.run(try which(cxx ? compiler.cxx : compiler.cc), arguments, currentDirectory: directory)
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
            let carried = try Instrumentation.carries(URL(fileURLWithPath: both), compiler)
            XCTAssertTrue(carried.instrumented, "\(compiler) -r:\n\(carried.evidence)")
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
        for compiler in [Compiler.gcc, .gccHooks] {
            let result = try wrapper(["-O2", "-static", "-c", source, "-o", "nested.o"], compiler: compiler, in: dir)
            XCTAssertEqual(result.status, 0, result.description)
            let carried = try Instrumentation.carries(dir.appendingPathComponent("nested.o"), compiler)
            XCTAssertTrue(carried.instrumented, "\(compiler):\n\(carried.evidence)")
        }
    }

    /// C++ code linked by a C driver (`calltrace-cc a.o`, as CMake links when told
    /// CMAKE_CXX_COMPILER=calltrace-cc) fails for want of the C++ library: the compiler's own errors
    /// and status, then one line naming the C++ wrapper. A C link that fails gets no such line, and
    /// the C++ wrapper links the same object.
    func testACDriverLinkingCxxCodeEndsWithAHintNamingTheCxxWrapper() throws {
        for compiler in Compiler.allCases {
            let dir = Workspace.directory("wrapper-cxx-hint-\(compiler)")
            try """
                #include <cstdio>
                #include <string>
                int main() { std::string *s = new std::string("hi"); std::puts(s->c_str()); delete s; return 0; }
                """.write(to: dir.appendingPathComponent("app.cpp"), atomically: true, encoding: .utf8)
            try "void missing(void);\nint main(void) { missing(); return 0; }\n"
                .write(to: dir.appendingPathComponent("c.c"), atomically: true, encoding: .utf8)
            let compiled = try wrapper(["-O2", "-c", "app.cpp", "-o", "app.o"], compiler: compiler, in: dir)
            XCTAssertEqual(compiled.status, 0, "\(compiler): \(compiled)")
            let direct = try plain(["app.o", "-o", "direct"], compiler: compiler, in: dir)
            XCTAssertNotEqual(direct.status, 0, "\(compiler): the C driver alone cannot link it either")
            for arguments in [["app.o", "-o", "app"], ["app.cpp", "-o", "app"]] {
                let linked = try wrapper(arguments, compiler: compiler, in: dir)
                let label = "\(compiler) calltrace-cc \(arguments.joined(separator: " "))"
                XCTAssertEqual(linked.status, direct.status, "\(label): the compiler's status:\n\(linked)")
                XCTAssertEqual(linked.stdout, direct.stdout, label)
                let lines = linked.stderr.split(separator: "\n")
                XCTAssertEqual(lines.last.map(String.init),
                               "calltrace-cc: hint: C++ code was linked by a C compiler driver, without the C++ library: "
                               + "use calltrace-c++ (or calltrace-g++, calltrace-clang++) as the C++ compiler "
                               + "(CMake: CMAKE_CXX_COMPILER; Meson and Make: CXX)", label)
                XCTAssertEqual(lines.filter { $0.contains("hint:") }.count, 1, "\(label):\n\(linked.stderr)")
                XCTAssertTrue(linked.stderr.contains("undefined reference"), "\(label): the linker's errors:\n\(linked.stderr)")
            }
            let cLink = try wrapper(["c.c", "-o", "c"], compiler: compiler, in: dir)
            XCTAssertNotEqual(cLink.status, 0, "\(compiler): \(cLink)")
            XCTAssertTrue(cLink.stderr.contains("missing"), cLink.stderr)
            XCTAssertFalse(cLink.stderr.contains("hint:"), "\(compiler): no hint for C code:\n\(cLink.stderr)")
            let cxxLink = try wrapper(["app.o", "-o", "app"], compiler: compiler, cxx: true, in: dir)
            XCTAssertEqual(cxxLink.status, 0, "\(compiler) calltrace-c++: \(cxxLink)")
            XCTAssertFalse(cxxLink.stderr.contains("hint:"), cxxLink.stderr)
            let run = try Command.run(dir.appendingPathComponent("app").path)
            XCTAssertEqual(run.stdout, "hi\n", "\(compiler): \(run)")
        }
    }

    /// A CMake project configured with a per-compiler wrapper (calltrace-clang, calltrace-g++...)
    /// keeps that compiler when it is built later from an empty environment, even one whose
    /// CALLTRACE_CC / CALLTRACE_CXX name the other compiler: the choice is in the build's
    /// configuration. The program is instrumented and records.
    func testPerCompilerWrappersKeepTheirCompilerInACMakeBuild() throws {
        try Workspace.requireProducts()
        let cmake = "/usr/bin/cmake"
        guard FileManager.default.isExecutableFile(atPath: cmake) else {
            return XCTFail("cmake is not installed: Scripts/test installs it (Scripts/deps cmake)")
        }
        let readelf = try which("readelf")
        for (wrapper, cxx, identification, isClang) in [("calltrace-clang", false, "Clang", true),
                                                        ("calltrace-g++", true, "GNU", false),
                                                        ("calltrace-clang++", true, "Clang", true),
                                                        ("calltrace-gcc", false, "GNU", false)] {
            let dir = Workspace.directory("cmake-\(wrapper)")
            let source = dir.appendingPathComponent("src"), build = dir.appendingPathComponent("build")
            try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
            let file = cxx ? "main.cpp" : "main.c"
            try """
                cmake_minimum_required(VERSION 3.13)
                project(app LANGUAGES \(cxx ? "CXX" : "C"))
                add_executable(app \(file))
                """.write(to: source.appendingPathComponent("CMakeLists.txt"), atomically: true, encoding: .utf8)
            try """
                #include <stdio.h>
                __attribute__((noinline)) int work(int n) { return n * 2; }
                int main(void) { printf("%d\\n", work(21)); return 0; }
                """.write(to: source.appendingPathComponent(file), atomically: true, encoding: .utf8)
            let tool = Workspace.packageRoot.appendingPathComponent("Scripts/\(wrapper)").path
            let variable = cxx ? "CMAKE_CXX_COMPILER" : "CMAKE_C_COMPILER"
            let configure = try Command.run(cmake, ["-S", source.path, "-B", build.path, "-D\(variable)=\(tool)"],
                                            timeout: 300)
            XCTAssertEqual(configure.status, 0, "\(wrapper) configure: \(configure)")
            XCTAssertTrue(configure.stdout.contains("compiler identification is \(identification)"),
                          "\(wrapper): \(configure.stdout)")
            // Later, in a new shell: nothing of the configuring environment, and the variables naming
            // the other compiler.
            let build_ = try Command.run("/usr/bin/env", ["-i", "PATH=/usr/local/bin:/usr/bin:/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? ""),
                                                          "CALLTRACE_CC=\(isClang ? "gcc" : "clang")",
                                                          "CALLTRACE_CXX=\(isClang ? "g++" : "clang++")",
                                                          cmake, "--build", build.path], timeout: 300)
            XCTAssertEqual(build_.status, 0, "\(wrapper) build: \(build_)")
            let binary = build.appendingPathComponent("app").path
            let comment = try Command.run(readelf, ["-p", ".comment", binary])
            XCTAssertEqual(comment.stdout.contains("clang version"), isClang, "\(wrapper) built with:\n\(comment.stdout)")
            let trace = dir.appendingPathComponent("app.trace")
            let run = try Command.run(binary, [], environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_OUTPUT": trace.path])
            XCTAssertEqual(run.status, 0, "\(wrapper): \(run)")
            XCTAssertEqual(run.stdout, "42\n", wrapper)
            let recorded = try RecordedTrace(trace)
            XCTAssertEqual(recorded.calls.filter { $0.name.hasPrefix("work") }.count, 1, "\(wrapper):\n\(recorded.tree)")
        }
    }
}
