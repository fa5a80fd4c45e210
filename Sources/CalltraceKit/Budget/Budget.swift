internal import CalltraceSettings
internal import TOMLKit

/// A budget file (`calltrace check --budget FILE`), TOML:
///
/// ```toml
/// [calls]          # the longest any one call of the function may take
/// load_assets = "50ms"
/// "parse".max = "20ms" # the same, as a dotted key, so that it can sit beside percentiles
/// "parse".p90 = "15ms" # the p90 of the function's worst call per trace, over every trace given
/// [marks]          # the latest each mark may come, from process start
/// "first frame" = "400ms"
/// [frames]
/// max_dropped_at_once = 2
/// max_drop_events = 3
/// [spans]          # the longest any one span of the name may take
/// "open document" = "300ms"
/// "save".max = "1s"   # the same, as a dotted key, so that it can sit beside percentiles
/// "save".p90 = "200ms" # the p90 of the name's finished spans over every trace given
/// ```
///
/// Durations are strings read as CALLTRACE_THRESHOLD is (`50ms`, `250us`, `1.5s`, a bare number is
/// ms), by the runtime's own parser. Every table is optional; anything else in the file is an error.
public struct Budget: Sendable, Equatable {
    public struct Limit: Sendable, Equatable {
        public var name: String
        public var limit: Nanoseconds
    }

    /// `[calls]`: function name to the longest one call may take, by name.
    public var calls: [Limit] = []
    /// `[calls]` percentiles (`parse.p90 = "15ms"`): of the function's worst call in each trace,
    /// over every trace given. Only the names that have percentiles; their `max` is in `calls`.
    public var callPercentiles: [NameLimits] = []
    /// `[marks]`: mark name to the latest it may come, by name.
    public var marks: [Limit] = []
    public var maxDroppedAtOnce: Int?
    public var maxDropEvents: Int?
    /// `[spans]`: span name to its limits, by name.
    public var spans: [SpanLimit] = []

    public typealias SpanLimit = NameLimits

    /// The limits of one span (or function) name: the longest one may take, and percentiles
    /// (nearest rank, as `spans` and `top` compute them) over every trace given.
    public struct NameLimits: Sendable, Equatable {
        public struct Percentile: Sendable, Equatable {
            /// 90 for p90.
            public var rank: Int
            public var limit: Nanoseconds
        }
        public var name: String
        public var max: Nanoseconds?
        /// By rank.
        public var percentiles: [Percentile] = []
    }

    public init() {}

    /// How many limits the file sets.
    public var limitCount: Int {
        calls.count + callPercentiles.reduce(0) { $0 + $1.percentiles.count } + marks.count
            + (maxDroppedAtOnce == nil ? 0 : 1) + (maxDropEvents == nil ? 0 : 1)
            + spans.reduce(0) { $0 + ($1.max == nil ? 0 : 1) + $1.percentiles.count }
    }

    private static let tables = ["calls", "marks", "frames", "spans"]
    private static let expectedTables = "[calls], [marks], [frames] or [spans]"
    private static let frameKeys = ["max_dropped_at_once", "max_drop_events"]

    /// The budget in `text`, or a `BudgetError` naming the first problem.
    public static func parse(_ text: String) throws -> Budget {
        let document: TOMLTable
        do {
            document = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw BudgetError("line \(error.source.begin.line), column \(error.source.begin.column): \(error.description)")
        }
        var budget = Budget()
        for name in document.keys.sorted() {
            guard let value = document[name] else { continue }
            guard tables.contains(name) else {
                throw BudgetError(value.type == .table
                                  ? "unknown table [\(name)] (expected \(expectedTables))"
                                  : "unknown key '\(name)' outside a table (expected \(expectedTables))")
            }
            guard let table = value.table else {
                throw BudgetError("'\(name)' must be a table ([\(name)]), not \(describe(value.type))")
            }
            switch name {
            case "calls":
                let limits = try nameLimits(table, in: name, example: "\"50ms\"", dotted: nil)
                budget.calls = limits.compactMap { limit in limit.max.map { Limit(name: limit.name, limit: $0) } }
                budget.callPercentiles = limits.filter { !$0.percentiles.isEmpty }
            case "marks": budget.marks = try durations(table, in: name)
            case "spans": budget.spans = try nameLimits(table, in: name, example: "\"300ms\"", dotted: "\"200ms\"")
            default:
                for key in table.keys.sorted() {
                    guard let value = table[key] else { continue }
                    guard frameKeys.contains(key) else {
                        throw BudgetError("[frames]: unknown key '\(key)' (expected max_dropped_at_once or max_drop_events)")
                    }
                    guard value.type == .int, let count = value.int else {
                        throw BudgetError("[frames] \(key): expected a whole number, not \(describe(value.type))")
                    }
                    guard count >= 0 else { throw BudgetError("[frames] \(key): \(count) is negative") }
                    if key == "max_dropped_at_once" { budget.maxDroppedAtOnce = count } else { budget.maxDropEvents = count }
                }
            }
        }
        return budget
    }

    private static func durations(_ table: TOMLTable, in name: String) throws -> [Limit] {
        try table.keys.sorted().compactMap { key in
            guard let value = table[key] else { return nil }
            guard value.type == .string, let text = value.string else {
                throw BudgetError("[\(name)] \(quoted(key)): expected a duration string such as \"50ms\", "
                                  + "not \(describe(value.type))")
            }
            guard let limit = DurationText.parse(text) else {
                throw BudgetError("[\(name)] \(quoted(key)): '\(text)' is not \(DurationText.expected)")
            }
            return Limit(name: key, limit: limit)
        }
    }

    /// `"open document" = "300ms"` (the longest one may take), or a table (dotted keys) of `max` and
    /// percentiles `p1` to `p100`: `"open document".p90 = "200ms"`. `[calls]` and `[spans]` read
    /// alike; `example` is the duration their messages suggest, `dotted` the one for a dotted key
    /// (nil: a wrong value's message names only the plain form).
    private static func nameLimits(_ table: TOMLTable, in tableName: String, example: String,
                                   dotted: String?) throws -> [NameLimits] {
        try table.keys.sorted().compactMap { key in
            guard let value = table[key] else { return nil }
            let name = quoted(key)
            if value.type == .string, let text = value.string {
                guard let limit = DurationText.parse(text) else {
                    throw BudgetError("[\(tableName)] \(name): '\(text)' is not \(DurationText.expected)")
                }
                return NameLimits(name: key, max: limit)
            }
            guard let limits = value.table else {
                let form = dotted.map { " or dotted keys such as \(name).p90 = \($0)" } ?? ""
                throw BudgetError("[\(tableName)] \(name): expected a duration string such as \(example)\(form), "
                                  + "not \(describe(value.type))")
            }
            var named = NameLimits(name: key)
            for field in limits.keys.sorted() {
                guard let value = limits[field] else { continue }
                let rank = field == "max" ? nil : percentileRank(field)
                guard field == "max" || rank != nil else {
                    throw BudgetError("[\(tableName)] \(name): unknown key '\(field)' (expected max, or a percentile p1 to p100 such as p90)")
                }
                guard value.type == .string, let text = value.string else {
                    throw BudgetError("[\(tableName)] \(name).\(field): expected a duration string such as \(dotted ?? example), "
                                      + "not \(describe(value.type))")
                }
                guard let limit = DurationText.parse(text) else {
                    throw BudgetError("[\(tableName)] \(name).\(field): '\(text)' is not \(DurationText.expected)")
                }
                if let rank { named.percentiles.append(.init(rank: rank, limit: limit)) } else { named.max = limit }
            }
            named.percentiles.sort { $0.rank < $1.rank }
            return named
        }
    }

    /// 90 for `p90`; nil for anything but p1 to p100 written plainly.
    private static func percentileRank(_ key: String) -> Int? {
        guard key.hasPrefix("p"), let rank = Int(key.dropFirst()), (1...100).contains(rank),
              String(rank) == key.dropFirst() else { return nil }
        return rank
    }

    private static func quoted(_ key: String) -> String {
        key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" } ? key : "\"\(key)\""
    }

    private static func describe(_ type: TOMLType) -> String {
        switch type {
        case .table: return "a table"
        case .array: return "an array"
        case .string: return "a string"
        case .int: return "an integer"
        case .double: return "a floating-point number"
        case .bool: return "a boolean"
        case .date: return "a date"
        case .time: return "a time"
        case .dateTime: return "a date-time"
        }
    }
}

/// A budget file that cannot be used, in one line.
public struct BudgetError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Durations read by the runtime's parser of CALLTRACE_THRESHOLD (CShims/settings), so a budget
/// accepts exactly the durations the runtime does.
enum DurationText {
    private static let row: Int? = (0..<ct_setting_count()).first { index in
        ct_setting_row(index).map { String(cString: $0.pointee.field) == "threshold" } ?? false
    }

    static let expected: String = row.flatMap { ct_setting_row($0) }.map { String(cString: $0.pointee.expected) }
        ?? "a duration such as 10ms"

    static func parse(_ text: String) -> Nanoseconds? {
        guard let row, !text.hasPrefix("-") else { return nil }
        var value: UInt64 = 0
        guard ct_setting_check(row, text, &value) else { return nil }
        return Nanoseconds(Int64(clamping: value))
    }
}
