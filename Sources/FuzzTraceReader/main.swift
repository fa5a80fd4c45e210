import CalltraceKit
import FuzzSupport

/// One fuzz input, read as a trace file the way `calltrace report` and `calltrace info` read one,
/// built into a profile and rendered by every registered view (`info`'s summary too); and read
/// again as each view that streams reads it (`ProfileView.stream`: `report --format jsonl`,
/// `export --format folded`, `export --format otlp`), written by the stream when it takes the
/// trace. Whatever the bytes, the reader must throw a `TraceError` or return what it could read,
/// and no view may trap. (Scripts/fuzz, docs/fuzzing.md)
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    // Read as `report` reads a file: the calls go from the reader straight into the profile.
    // Module files are never opened: a fuzzed path may name anything. A path that does not exist
    // still takes the symbolicator through choosing the module and naming `module+0xoffset`.
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    func symbolicator(_ modules: [TraceModule]) -> Symbolicator {
        Symbolicator(modules: modules.map { module in
            var module = module
            module.path = "/nonexistent/calltrace-fuzz/" + module.name
            return module
        }, warn: { _ in })
    }
    guard let (trace, profile) = try? ProfileBuilder.read(bytes: bytes, makeSymbolicator: symbolicator) else { return 0 }
    let output = ByteOutput { _ in }
    let options = ViewOptions()
    for view in ViewRegistry.all {
        view.render(ViewInput([profile], baseline: [profile], traces: [trace]), options: options, to: output)
        // And made while the bytes are read, as `report` and `export` make it when it streams.
        let streamed = try? view.streamed(options: options) {
            try ProfileBuilder.stream(bytes: bytes, into: $0, makeSymbolicator: symbolicator)
        }
        try? streamed?.write(to: output)
    }
    output.flush()
    return 0
}

FuzzDriver.main(fuzzTestOneInput)
