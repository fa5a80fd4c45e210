/// A function the runtime stopped timing because it ran very often and never came near the
/// threshold (adaptive muting; a MUTED record, docs/trace-format.md). Its calls after `mutedTick`
/// are not in the trace: their time is part of their callers' cost.
public struct MutedFunction: Equatable, Sendable {
    /// The function's address, as CALL records give it.
    public var function: UInt64
    /// When it was muted.
    public var mutedTick: Ticks
    /// Its calls until then, estimated from sampled exits.
    public var estimatedCalls: UInt64
    /// Its hook calls were patched out of the code (they cost next to nothing now).
    public var patched: Bool
    /// Some of its hook calls could not be patched: the hooks check for it and return at once.
    public var inHookCheck: Bool
    /// Hook call sites patched.
    public var sitesPatched: UInt64

    public init(function: UInt64, mutedTick: Ticks, estimatedCalls: UInt64, patched: Bool, inHookCheck: Bool,
                sitesPatched: UInt64) {
        self.function = function
        self.mutedTick = mutedTick
        self.estimatedCalls = estimatedCalls
        self.patched = patched
        self.inHookCheck = inHookCheck
        self.sitesPatched = sitesPatched
    }

    /// "patched (3 sites)", "in-hook check", or both.
    public var methodText: String {
        let sites = "patched (\(sitesPatched) site\(sitesPatched == 1 ? "" : "s"))"
        switch (patched, inHookCheck) {
        case (true, true): return sites + " and in-hook check"
        case (true, false): return sites
        default: return "in-hook check"
        }
    }

    /// The header's `mute_mode`, as `info` shows it.
    public static func modeText(_ mode: UInt32) -> String {
        switch mode {
        case 1: return "off"
        case 2: return "auto (hook calls patched out, in-hook check where they cannot be)"
        case 3: return "hook (in-hook check only)"
        default: return "unknown"
        }
    }
}
