/// A function the runtime muted (adaptive muting): hot, its calls never near the threshold.
public struct ProfileMutedFunction: Sendable {
    public var function: ProfileFunction
    /// Its calls until it was muted, estimated by the runtime from sampled exits.
    public var estimatedCalls: Int

    public init(function: ProfileFunction, estimatedCalls: Int) {
        self.function = function
        self.estimatedCalls = estimatedCalls
    }
}
