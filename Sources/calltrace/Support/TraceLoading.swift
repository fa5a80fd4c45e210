import CalltraceKit

/// A trace's warnings on stderr, once a view of it is written.
enum TraceLoading {
    static func reportWarnings(of trace: Trace) {
        trace.warnings.forEach(Diagnostics.warning)
    }
}
