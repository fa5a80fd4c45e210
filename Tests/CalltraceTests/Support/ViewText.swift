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
