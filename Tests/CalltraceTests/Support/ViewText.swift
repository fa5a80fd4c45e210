import CalltraceKit

/// The profile of a trace held in memory, read as `report` reads a file (`ProfileBuilder`), no
/// module file opened unless the trace's modules name real files.
func syntheticProfile(_ bytes: [UInt8], lines: Bool = false, measured: Bool = false,
             symbolicator: Symbolicator? = nil) throws -> Profile {
    try ProfileBuilder.read(bytes: bytes, options: TraceReader.Options(measured: measured)) { modules in
        symbolicator ?? Symbolicator(modules: modules, lines: lines, warn: { _ in })
    }.1
}

/// A view's whole output for a trace held in memory.
func viewText(_ view: any ProfileView.Type, _ bytes: [UInt8], measured: Bool = false,
              options: ViewOptions = ViewOptions(), symbolicator: Symbolicator? = nil) throws -> String {
    let profile = try syntheticProfile(bytes, lines: view.needsLines, measured: measured, symbolicator: symbolicator)
    return view.text(ViewInput([profile]), options: options)
}

/// A view's output made while a trace held in memory is read (`ProfileView.streamed`, as
/// `report` and `export` make it); nil when the view does not stream or its stream asked for a
/// whole profile.
func streamedText(_ view: any ProfileView.Type, _ bytes: [UInt8], options: ViewOptions = ViewOptions(),
                  symbolicator: (([TraceModule]) -> Symbolicator)? = nil) throws -> String? {
    let makeSymbolicator = symbolicator ?? { Symbolicator(modules: $0, lines: view.needsLines, warn: { _ in }) }
    guard let streamed = try view.streamed(options: options, read: {
        try ProfileBuilder.stream(bytes: bytes, into: $0, makeSymbolicator: makeSymbolicator)
    }) else { return nil }
    var failure: Error?
    let text = ByteOutput.text { output in
        do {
            try streamed.write(to: output)
        } catch {
            failure = error
        }
    }
    if let failure { throw failure }
    return text
}

/// Whether `view` is made while the trace at `path` is read, as `report` and `export` read it (the
/// stream takes the trace, no whole profile is needed).
func streams(_ view: any ProfileView.Type, path: String) throws -> Bool {
    try view.streamed(options: ViewOptions(), read: {
        try ProfileBuilder.stream(path: FilePath(path), into: $0) { Symbolicator(modules: $0, lines: view.needsLines, warn: { _ in }) }
    }) != nil
}
