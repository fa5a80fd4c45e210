/// The FILTER record: `CALLTRACE_FILTER` as the runtime applied it (`record --filter`), and how many
/// functions its patterns matched in the program's instrumented modules. Excluded functions were
/// never timed (their time is their callers'); with any included function, only the calls inside
/// one were recorded.
public struct TraceFilter: Equatable, Sendable {
    /// The setting as given: comma-separated globs, `-NAME` excludes.
    public var spec: String
    public var excludedFunctions: UInt64
    public var includedFunctions: UInt64

    /// Decodes a FILTER record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let (spec, excluded, included) = try body.read(String.self, UInt64.self, UInt64.self)
        self.init(spec: spec, excludedFunctions: excluded, includedFunctions: included)
    }

    public init(spec: String, excludedFunctions: UInt64, includedFunctions: UInt64) {
        self.spec = spec
        self.excludedFunctions = excludedFunctions
        self.includedFunctions = includedFunctions
    }

    /// "-log_*,render (3 functions excluded, 1 included)"
    public var text: String {
        func count(_ n: UInt64) -> String { "\(n) function\(n == 1 ? "" : "s")" }
        return "\(spec) (\(count(excludedFunctions)) excluded, \(includedFunctions) included)"
    }

    /// The report's header line: what the costs shown leave out.
    public var reportLine: String {
        var parts: [String] = []
        if excludedFunctions > 0 {
            let one = excludedFunctions == 1
            parts.append("\(excludedFunctions) function\(one ? "" : "s") excluded (never timed: "
                         + (one ? "its time is its callers')" : "their time is their callers')"))
        }
        if includedFunctions > 0 {
            parts.append("only the calls inside \(includedFunctions) included function\(includedFunctions == 1 ? "" : "s") recorded")
        }
        if parts.isEmpty { parts.append("no function matched: every call recorded as without it") }
        return "recorded with CALLTRACE_FILTER=\(spec): " + parts.joined(separator: "; ")
    }
}
