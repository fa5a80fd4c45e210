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
    /// Hook call sites patched (or sleds, with `sleds`).
    public var sitesPatched: UInt64
    /// The function was built with sleds: they were patched out, leaving its code as an
    /// uninstrumented build's but for a jump at entry.
    public var sleds: Bool
    /// It ran hot on threads that do not record (CALLTRACE_THREADS=main's other threads), and never
    /// on one that does: muted so that those threads run at their uninstrumented speed.
    public var unrecordedOnly: Bool
    /// Muted only inside its own calls (a recursion's inner calls, docs/design.md "Adaptive
    /// muting"): from `mutedTick` on, a call with this many calls of it open beneath it was not
    /// timed; its outer calls still were, and its slow ones are in the trace. Nil: muted whole.
    public var insideLevel: UInt64?

    /// Decodes a MUTED record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let (function, tick, calls, how, sites) = try body.read(UInt64.self, Ticks.self, UInt64.self, UInt64.self,
                                                                 UInt64.self)
        let level = how & TraceFormat.MuteHow.levels != 0 ? try body.readVarint() : nil
        self.init(function: function, mutedTick: tick, estimatedCalls: calls,
                  patched: how & TraceFormat.MuteHow.patched != 0,
                  inHookCheck: how & TraceFormat.MuteHow.inHook != 0, sitesPatched: sites,
                  sleds: how & TraceFormat.MuteHow.sleds != 0,
                  unrecordedOnly: how & TraceFormat.MuteHow.unrecorded != 0, insideLevel: level)
    }

    public init(function: UInt64, mutedTick: Ticks, estimatedCalls: UInt64, patched: Bool, inHookCheck: Bool,
                sitesPatched: UInt64, sleds: Bool = false, unrecordedOnly: Bool = false, insideLevel: UInt64? = nil) {
        self.function = function
        self.mutedTick = mutedTick
        self.estimatedCalls = estimatedCalls
        self.patched = patched
        self.inHookCheck = inHookCheck
        self.sitesPatched = sitesPatched
        self.sleds = sleds
        self.unrecordedOnly = unrecordedOnly
        self.insideLevel = insideLevel
    }

    /// "patched (3 sites)", "sleds patched out (3)", "in-hook check", or both; and "run only by
    /// threads not recorded" for such a function. For one muted inside its own calls, which of
    /// its calls are still timed.
    public var methodText: String {
        if let level = insideLevel {
            return "only inside its own calls: not timed with \(level) or more of them open beneath, "
                + "its outer calls still timed"
        }
        let sites = sleds ? "sleds patched out (\(sitesPatched))"
            : "patched (\(sitesPatched) site\(sitesPatched == 1 ? "" : "s"))"
        let method: String
        switch (patched, inHookCheck) {
        case (true, true): method = sites + " and in-hook check"
        case (true, false): method = sites
        default: method = "in-hook check"
        }
        return unrecordedOnly ? method + "; run only by threads not recorded" : method
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
