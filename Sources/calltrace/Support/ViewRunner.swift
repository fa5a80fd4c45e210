import CalltraceKit

/// A view of one trace file, as `report` and `export` show one: made while the trace is read when
/// the view can be (`ProfileView.stream`), so that memory does not grow with the calls, else (or
/// when the stream cannot take this trace) from a whole profile, read again. A streamed read's
/// symbolication warnings are held until the stream is known to stand: a trace read again would
/// warn again.
enum ViewRunner {
    /// What was read: the trace (its warnings and header), the profile (without calls when
    /// streamed) and the stream that made the view, if one did.
    struct Run {
        var trace: Trace
        var profile: Profile
        var stream: (any ViewStream)?
    }

    /// Reads `file` and writes `view` through `write`, which hands the body that writes the view's
    /// bytes an output (standard output, a file) and flushes it.
    static func run(_ view: any ProfileView.Type, of file: FilePath,
                    readOptions: TraceReader.Options = TraceReader.Options(), lines: Bool, options: ViewOptions,
                    write: (_ body: (ByteOutput) throws -> Void) throws -> Void) throws -> Run {
        var warnings: [String] = []
        if let streamed = try view.streamed(options: options, read: { consumer in
            try ProfileLoading.stream(file, options: readOptions, lines: lines, into: consumer,
                                      warn: { warnings.append($0) })
        }) {
            warnings.forEach(Diagnostics.warning)
            try write { try streamed.write(to: $0) }
            return Run(trace: streamed.trace, profile: streamed.profile, stream: streamed.stream)
        }
        let (trace, profile) = try ProfileLoading.read(file, options: readOptions, lines: lines)
        try write { view.render(ViewInput([profile]), options: options, to: $0) }
        return Run(trace: trace, profile: profile, stream: nil)
    }
}
