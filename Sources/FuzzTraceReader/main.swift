import CalltraceKit
import FuzzSupport

/// One fuzz input, read as a trace file the way `calltrace report` and `calltrace info` read one,
/// built into a profile and rendered by every registered view (`info`'s summary too). Whatever the
/// bytes, the reader must throw a `TraceError` or return what it could read: never trap.
/// (Scripts/fuzz, docs/fuzzing.md)
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // Read as `report` reads a file: the calls go from the reader straight into the profile.
    // Module files are never opened: a fuzzed path may name anything. A path that does not exist
    // still takes the symbolicator through choosing the module and naming `module+0xoffset`.
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let (trace, profile) = try? ProfileBuilder.read(bytes: bytes, makeSymbolicator: { modules in
        Symbolicator(modules: modules.map { module in
            var module = module
            module.path = "/nonexistent/calltrace-fuzz/" + module.name
            return module
        }, warn: { _ in })
    }) else { return 0 }
    let output = ByteOutput { _ in }
    for view in ViewRegistry.all {
        view.render(ViewInput([profile], baseline: [profile], traces: [trace]), options: ViewOptions(), to: output)
    }
    output.flush()
    return 0
}

FuzzDriver.main(fuzzTestOneInput)
