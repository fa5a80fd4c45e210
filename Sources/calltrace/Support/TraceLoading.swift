import CalltraceKit

/// Reads a trace for a view and reports its warnings on stderr.
enum TraceLoading {
    static func load(_ path: FilePath, options: TraceReader.Options = TraceReader.Options()) throws -> Trace {
        do {
            return try ProgressLine.reading(path, options) { try TraceReader.read(path: path, options: $0) }
        } catch let error as TraceError {
            switch error {
            case .cannotOpen, .isDirectory: throw CalltraceError("\(error)")
            default: throw CalltraceError("\(path): \(error)")
            }
        }
    }

    static func reportWarnings(of trace: Trace) {
        trace.warnings.forEach(Diagnostics.warning)
    }
}
