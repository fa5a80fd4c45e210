@testable import CalltraceKit
import Foundation
import XCTest

/// Mangled names come out in source form: C++ and both Rust schemes through libiberty, Swift
/// through the Swift runtime's demangler. Expected texts are those of c++filt, rustfilt (the
/// rustc-demangle crate, whose default drops a legacy name's hash) and swift-demangle.
final class DemanglingTests: XCTestCase {
    private func assertDemangles(_ cases: [(String, String)], file: StaticString = #filePath, line: UInt = #line) {
        let demangler = Demangler()
        for (mangled, expected) in cases {
            XCTAssertEqual(demangler.demangle(mangled), expected, mangled, file: file, line: line)
            XCTAssertEqual(demangler.demangle(mangled), expected, "\(mangled), from the cache", file: file, line: line)
        }
    }

    func testCxxNamesWithTemplatesAndOperators() {
        assertDemangles([
            ("_ZN3foo3barEv", "foo::bar()"),
            ("_Z1fIiEvT_", "void f<int>(int)"),
            ("_ZN2ns3maxIiEET_S1_S1_", "int ns::max<int>(int, int)"),
            ("_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)"),
            ("_ZNKSt6vectorIiSaIiEE4sizeEv", "std::vector<int, std::allocator<int> >::size() const"),
            ("_ZN1AplERKS_", "A::operator+(A const&)"),
            ("_ZdlPv", "operator delete(void*)"),
            ("_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const"),
        ])
    }

    /// gcc's copies of a function are shown as the function: a build with sleds times the copies
    /// (`f.constprop.0`, `ns::A::operator+(ns::A const&) [clone .constprop.0]`), which the reader
    /// knows by the source's name. A dotted name that is not such a copy stays as it is.
    func testGccClonesAreShownAsTheFunctionTheyCopy() {
        assertDemangles([
            ("f.constprop.0", "f"),
            ("parse_line.isra.0", "parse_line"),
            ("step.part.0", "step"),
            ("f.constprop.0.isra.0", "f"),
            ("helper.lto_priv.0", "helper"),
            ("main.cold", "main"),
            ("_ZN2ns1AplERKS0_.constprop.0", "ns::A::operator+(ns::A const&)"),
            ("_ZN3foo3barEv.isra.0", "foo::bar()"),
            ("f.1", "f.1"),
            ("a.b", "a.b"),
            (".Lstart", ".Lstart"),
            ("f.constprop", "f"),
            ("f.constprop.x", "f.constprop.x"),
        ])
    }

    /// Legacy Rust names are valid C++ names too: they must come out as Rust (`::`, no hash,
    /// `$LT$`-escapes decoded), not as C++ (`core::fmt::write::h0123...`).
    func testRustLegacyNamesLoseTheirHash() {
        assertDemangles([
            ("_ZN12panic_unwind3imp5panic17exception_cleanup17he4cf772173d90f46E",
             "panic_unwind::imp::panic::exception_cleanup"),
            ("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"),
            ("_ZN13_$LT$test$GT$17h0123456789abcdefE", "<test>"),
            ("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h6a4c1a8b3e5d2f10E",
             "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>"),
            ("_ZN7mycrate4main17h9e4f4e1e9b2d3c1aE.llvm.123", "mycrate::main"),
        ])
    }

    /// From the v0 RFC (2603) and rustc-demangle's and LLVM's tests.
    func testRustV0Names() {
        assertDemangles([
            ("_RNvC1a4main", "a::main"),
            ("_RNvC6_123foo3bar", "123foo::bar"),
            ("_RNvCs6KtT2fMGqXk_8infiloop4main", "infiloop::main"),
            ("_RNvNtCs1cm6uc4Jkoh_4core3ptr13drop_in_place", "core::ptr::drop_in_place"),
            ("_RINbNbCskIICzLVDPPb_5alloc5alloc8box_freeDINbNiB4_5boxed5FnBoxuEp6OutputuEL_ECs4fqI2P2rA04_11hello_world",
             "alloc::alloc::box_free::<dyn alloc::boxed::FnBox<(), Output = ()>>"),
        ])
    }

    func testSwiftNamesOfEveryPrefix() {
        assertDemangles([
            ("$s4main3fooyyF", "main.foo() -> ()"),
            ("_$s4main3fooyyF", "main.foo() -> ()"),
            ("$S4main3fooyyF", "main.foo() -> ()"),
            ("_T04main3fooyyF", "main.foo() -> ()"),
            ("$s4main5PointV6lengthSdvg", "main.Point.length.getter : Swift.Double"),
        ])
    }

    /// C names, names that start like mangled ones without being one, and a type encoding
    /// (`i` is `int` to a demangler asked for types: never here).
    func testOtherNamesStayAsTheyAre() {
        let names = ["main", "Zap", "Reset", "_Reset", "_Zombie", "_Z", "_R", "_RNvC", "_T0tally", "$sfoo",
                     "i", "v", "s4main3fooyyF", "", "_ZN3foo3barE\u{0}x", "données"]
        assertDemangles(names.map { ($0, $0) })
    }

    /// A crafted name nested deeper than any real one (the reviewer's: it overflowed
    /// swift_demangle's stack) is shown as it is, without reaching a demangler.
    func testOverlongNamesAreNotDemangled() {
        let deep = "$s4main3fooyy" + String(repeating: "Say", count: 100_000) + "Si"
            + String(repeating: "G", count: 100_000) + "F"
        // A plain function whose name alone is over the limit (libiberty would read it).
        let long = "_Z4100" + String(repeating: "a", count: 4100) + "v"
        assertDemangles([(deep, deep), (long, long), ("_Z3foov", "foo()")])
        XCTAssertEqual(Demangler().demangle("$s4main3fooyyF"), "main.foo() -> ()")
    }

    // MARK: - Through the command line

    private func reportedNames(of fixture: Fixture, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_MUTE": "off"])
        XCTAssertEqual(run.status, 0, run.description, file: file, line: line)
        let report = try calltrace(["report", trace.path])
        XCTAssertEqual(report.status, 0, report.description, file: file, line: line)
        return report.stdout.split(separator: "\n").compactMap(treeLineName)
    }

    /// mangled_names.c: C functions bearing Rust and Swift symbol names (asm labels) and C
    /// functions whose names only look mangled, recorded at threshold 0.
    func testReportDemanglesRustAndSwiftNamesOfARealProgram() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["mangled_names.c"], compiler: compiler)
            let names = try reportedNames(of: fixture)
            var expected = ["main", "mycrate::legacy", "mycrate::example", "main.bar() -> ()", "main.baz() -> ()"]
            // gcc's assembler cannot take a symbol starting with `$`: the fixture has these only with clang.
            if !compiler.isGcc { expected += ["main.foo() -> ()", "main.qux() -> ()"] }
            expected += ["Zap", "_Reset", "_Zombie", "_T0tally"]
            XCTAssertEqual(names, expected, "\(compiler)")
        }
    }

    /// names.cpp with g++ and clang++: namespaces, a class template, overloads.
    func testReportDemanglesCxxNamesOfARealProgram() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["names.cpp"], compiler: compiler, cxx: true)
            let names = Set(try reportedNames(of: fixture))
            for expected in ["app::io::Loader<int>::load(int)", "app::io::Loader<double>::load(double)",
                             "app::render(int)", "app::render(double)", "main"] {
                XCTAssertTrue(names.contains(expected), "\(compiler): \(expected) not in \(names.sorted())")
            }
            XCTAssertFalse(names.contains { $0.hasPrefix("_Z") }, "\(compiler): \(names.sorted())")
        }
    }

    /// exclude-list writes names gcc's -finstrument-functions-exclude-function-list matches: the C
    /// names as they are, never a demangled Rust or Swift name (gcc compiled no such function) nor
    /// the mangled one (gcc matches the C identifier, not the asm label).
    func testExcludeListKeepsCNamesAndLeavesRustAndSwiftNamesOut() throws {
        let fixture = try Fixture.build(["mangled_names.c"], compiler: .gcc, name: "mangled_names-exclude")
        let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_MUTE": "off"])
        XCTAssertEqual(run.status, 0, run.description)
        let made = try calltrace(["exclude-list", trace.path, "--min-calls", "1", "--max-cost", "10s"])
        XCTAssertEqual(made.status, 0, made.description)
        let listed = Set(made.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
            .map { String($0.split(separator: " ")[0]) })
        // `_Zombie` is left out too: a `_Z` name no demangler reads may be a C++ name it does not know.
        XCTAssertTrue(listed.isSuperset(of: ["Zap", "_Reset", "_T0tally"]), made.description)
        for name in listed {
            XCTAssertTrue(name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }, "\(name):\n\(made)")
            XCTAssertFalse(["_ZN", "_RNv", "_$s", "_T04"].contains { name.hasPrefix($0) }, "\(name):\n\(made)")
        }
        XCTAssertTrue(made.stderr.contains("Rust, Swift"), made.stderr)
    }
}
