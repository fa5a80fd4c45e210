/// A stretch of a sampled thread's time in one state (`ThreadTime.segments`), in the profile's
/// instants: what `export --format perfetto` draws as the thread's state track.
public struct ProfileThreadState: Equatable, Sendable {
    public var start: Instant
    public var end: Instant
    public var state: ThreadTime.Segment.State

    public init(start: Instant, end: Instant, state: ThreadTime.Segment.State) {
        self.start = start
        self.end = end
        self.state = state
    }
}
