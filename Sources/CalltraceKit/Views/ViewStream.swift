/// A view made while the trace is read, so that its memory does not grow with the number of calls:
/// the reader hands it each call as it comes (`ProfileCallConsumer`, through
/// `ProfileBuilder.stream`), none kept. A view that can be made so says so in the registry
/// (`ProfileView.stream`); `report --format jsonl` (`ReportJSONLStream`), `export --format folded`
/// (`FoldedExportStream`) and `export --format otlp` (`OTLPExportStream`) can.
///
/// Once the trace is read, `finish` says whether what the stream made is the view's output, byte
/// for byte. When it is not (calls that came in an order that cannot give the view's tree: a
/// stream's blocks out of order, a signal handler's calls interleaved with others; or a temporary
/// file that could not be written), nothing has been written: the view is rendered from a whole
/// profile instead, read again.
public protocol ViewStream: ProfileCallConsumer {
    /// Once the trace is read (`trace` and `profile`, without calls, are what the streamed read
    /// gave back): true when `write` writes the view's bytes.
    func finish(trace: Trace, profile: Profile) -> Bool
    /// Writes the view, after `finish` said true; throws when a temporary file cannot be read back.
    func write(trace: Trace, profile: Profile, options: ViewOptions, to output: ByteOutput) throws
}

/// A view made while its trace was read, ready to be written (`ProfileView.streamed`).
public struct StreamedView {
    public let trace: Trace
    /// The profile without calls (the stream had them).
    public let profile: Profile
    public let stream: any ViewStream
    public let options: ViewOptions

    /// Writes the view's bytes; throws when a temporary file cannot be read back.
    public func write(to output: ByteOutput) throws {
        try stream.write(trace: trace, profile: profile, options: options, to: output)
    }
}

extension ProfileView {
    public static func stream(options: ViewOptions) -> (any ViewStream)? { nil }

    /// This view made while a trace is read: `read` reads it, handing each call to the consumer it
    /// is given (`ProfileBuilder.stream`). Nil when the view does not stream, or when its stream
    /// could not take this trace: then render it from a whole profile.
    public static func streamed(options: ViewOptions,
                                read: (ProfileCallConsumer) throws -> (Trace, Profile)) rethrows -> StreamedView? {
        guard let stream = stream(options: options) else { return nil }
        let (trace, profile) = try read(stream)
        guard stream.finish(trace: trace, profile: profile) else { return nil }
        return StreamedView(trace: trace, profile: profile, stream: stream, options: options)
    }
}
