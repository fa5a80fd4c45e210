import CalltraceKit

/// A view's whole output for a trace read in the test, no module file opened unless the trace's
/// modules name real files.
func viewText(_ view: any ProfileView.Type, _ trace: Trace, measured: Bool = false,
              options: ViewOptions = ViewOptions(), symbolicator: Symbolicator? = nil) -> String {
    let symbolicator = symbolicator ?? Symbolicator(modules: trace.modules, lines: view.needsLines, warn: { _ in })
    var builder = ProfileBuilder(trace: trace, symbolicator: symbolicator)
    builder.measured = measured
    return view.text(ViewInput([builder.build()]), options: options)
}
