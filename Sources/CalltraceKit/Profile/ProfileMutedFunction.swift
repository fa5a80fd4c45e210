/// A function the runtime muted (adaptive muting): hot, its calls never near the threshold.
public struct ProfileMutedFunction: Sendable {
    public var function: ProfileFunction
    /// Its calls until it was muted, estimated by the runtime from sampled exits.
    public var estimatedCalls: Int
    /// Muted only inside its own calls (MutedFunction.insideLevel): its outer calls are still
    /// timed, and slow ones recorded.
    public var insideOwnCallsOnly: Bool

    public init(function: ProfileFunction, estimatedCalls: Int, insideOwnCallsOnly: Bool = false) {
        self.function = function
        self.estimatedCalls = estimatedCalls
        self.insideOwnCallsOnly = insideOwnCallsOnly
    }
}
