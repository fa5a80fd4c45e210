import CalltraceKit
import FuzzSupport

/// One fuzz input, read as a trace file the way `calltrace report` and `calltrace info` read one,
/// built into a profile and rendered by every registered view, and as the summary. Whatever the
/// bytes, the reader must throw a `TraceError` or return what it could read: never trap.
/// (Scripts/fuzz, docs/fuzzing.md)
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let trace = try? TraceReader.read(UnsafeRawBufferPointer(start: data, count: size)) else { return 0 }
    // Module files are never opened: a fuzzed path may name anything. A path that does not exist
    // still takes the symbolicator through choosing the module and naming `module+0xoffset`.
    let modules = trace.modules.map { module in
        var module = module
        module.path = "/nonexistent/calltrace-fuzz/" + module.name
        return module
    }
    let profile = ProfileBuilder(trace: trace, symbolicator: Symbolicator(modules: modules, warn: { _ in })).build()
    let output = ByteOutput { _ in }
    for view in ViewRegistry.all {
        view.render(ViewInput([profile], baseline: [profile]), options: ViewOptions(), to: output)
    }
    output.flush()
    var discard = DiscardingOutput()
    discard.write(InfoRenderer(trace: trace).render())
    return 0
}

FuzzDriver.main(fuzzTestOneInput)
