// swift-tools-version:5.9
import PackageDescription

// The runtime is C and must never be instrumented: it is built without
// -finstrument-functions, every function also carries CT_NO_INSTRUMENT, and it
// is always optimised, even in debug builds, because it sits on the traced
// program's hot path.
let runtimeFlags: [CSetting] = [
    .define("_GNU_SOURCE"),
    .unsafeFlags(["-O2", "-fvisibility=hidden",
                  "-fno-omit-frame-pointer", "-ftls-model=initial-exec"]),
]

let package = Package(
    name: "calltrace",
    products: [
        .executable(name: "calltrace", targets: ["calltrace"]),
        .library(name: "calltrace_rt", type: .dynamic, targets: ["CalltraceRuntime"]),
        .library(name: "CalltraceKit", targets: ["CalltraceKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Budget files (`calltrace check --budget`) are TOML.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // The runtime's settings (the CALLTRACE_* table, its parsers) and its warnings: linked into the
        // runtime, and into the CLI so that `record` accepts exactly what the runtime accepts.
        .target(
            name: "CalltraceSettings",
            path: "CShims/settings",
            cSettings: runtimeFlags + [.headerSearchPath("../runtime")]  // ct_base.h
        ),
        // The C runtime: __cyg_profile_func_enter/exit, the per-thread stack, the trace writer.
        .target(
            name: "CalltraceRuntime",
            dependencies: ["CalltraceSettings"],
            path: "CShims/runtime",
            cSettings: runtimeFlags,
            linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread"),
                             // CALLTRACE_FILTER's demangler (libiberty-dev's static, position-
                             // independent libiberty.a), its symbols kept inside the runtime.
                             .linkedLibrary("iberty"),
                             // No Swift runtime in the traced program: see Scripts/link-runtime.
                             .unsafeFlags(["-nostartfiles", "-Xlinker", "--exclude-libs=libiberty.a",
                                           "-ld-path=\(Context.packageDirectory)/Scripts/link-runtime"])]
        ),
        // System libraries through pkg-config.
        .systemLibrary(name: "CLibElf", path: "CShims/CLibElf", pkgConfig: "libelf",
                       providers: [.apt(["libelf-dev"])]),
        .systemLibrary(name: "CLibDW", path: "CShims/CLibDW", pkgConfig: "libdw",
                       providers: [.apt(["libdw-dev"])]),
        .systemLibrary(name: "CLibUnwind", path: "CShims/CLibUnwind", pkgConfig: "libunwind",
                       providers: [.apt(["libunwind-dev"])]),
        // Small C glue for the Swift side: demangling C++ and Rust names with libiberty (Debian's
        // libiberty-dev: a static, position-independent libiberty.a), Swift names with the Swift
        // runtime's swift_demangle.
        .target(
            name: "CalltraceGlue",
            path: "CShims/glue",
            linkerSettings: [.linkedLibrary("iberty")]
        ),
        // Reading traces, symbolication, the call tree and its views.
        .target(
            name: "CalltraceKit",
            dependencies: ["CLibElf", "CLibDW", "CalltraceGlue", "CalltraceSettings",
                           .product(name: "TOMLKit", package: "TOMLKit")],
            // Release builds skip the run-time exclusivity checks: the reader and the renderers
            // touch class state per record, and the checks were a tenth of `report`'s time.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        .executableTarget(
            name: "calltrace",
            dependencies: [
                "CalltraceKit",
                "CalltraceSettings",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Fuzz targets for the trace reader and the ELF symbol reader. A plain build runs saved
        // inputs through them; Scripts/fuzz builds them with libFuzzer (docs/fuzzing.md).
        .target(name: "FuzzSupport"),
        .executableTarget(name: "FuzzTraceReader", dependencies: ["CalltraceKit", "FuzzSupport"]),
        .executableTarget(name: "FuzzElfReader", dependencies: ["CalltraceKit", "FuzzSupport"]),
        // docs/reference/settings.md and commands.md, written from the settings table and the CLI's own
        // help: `reference-docs docs/reference` (ReferenceDocsTests fails when the committed pages differ).
        .executableTarget(name: "reference-docs", dependencies: ["CalltraceSettings"]),
        .testTarget(
            name: "CalltraceTests",
            dependencies: ["CalltraceKit", "CalltraceSettings"],
            exclude: ["Fixtures"]
        ),
    ]
)
