/// The hot, always-fast functions of some profiles, named as gcc matches them: what
/// `calltrace exclude-list` writes for `-finstrument-functions-exclude-function-list`.
///
/// Chosen over each profile's per-function statistics (`FunctionStatistics`: calls, and per-call
/// costs with the hooks' overhead taken out, as every view shows them) and the functions its
/// runtime muted. A function is hot when it was muted, or called at least `minCalls` times; fast
/// when no more than `outliers` percent of its calls cost `maxCost` or more. gcc excludes every
/// function whose name contains a listed one, so a name that is part of another function's name
/// that stays instrumented is left out (`clashing`).
public struct HotFastFunctions {
    public struct Criteria: Sendable {
        public var minCalls: Int
        public var maxCost: Nanoseconds
        /// Percent.
        public var outliers: Double

        public init(minCalls: Int, maxCost: Nanoseconds, outliers: Double) {
            self.minCalls = minCalls
            self.maxCost = maxCost
            self.outliers = outliers
        }
    }

    /// One function as gcc names it, with every function that bears that name (clones, overloads,
    /// same-named static functions of several modules: gcc excludes them all by name, so they
    /// count together).
    public struct Function: Sendable {
        public var name: String
        /// Recorded calls (every call, in a threshold-0 trace), and a muted function's estimated
        /// calls up to its muting.
        public var calls = 0
        /// Calls that cost `maxCost` or more.
        public var slow = 0
        public var longest = Nanoseconds.zero
        /// The runtime muted it in some run: hot, and never near the threshold.
        public var muted = false

        mutating func add(_ other: Function) {
            calls += other.calls
            slow += other.slow
            longest = max(longest, other.longest)
            muted = muted || other.muted
        }
    }

    public let criteria: Criteria
    /// Listed, most calls first (then by name).
    public private(set) var listed: [Function] = []
    /// Hot and fast, but their name is part of a name that stays instrumented: (name, that name).
    public private(set) var clashing: [(name: String, within: String)] = []
    /// Hot and fast, but with a name gcc prints differently (C++ templates, operators...).
    public private(set) var unnameable: [String] = []
    /// Every call counted, of every function.
    public private(set) var tracedCalls = 0

    private var functions: [String: Function] = [:]
    private var unnameableFunctions: [String: Function] = [:]
    /// The instrumented modules the functions came from, by path (one of each).
    private var modules: [String: TraceModule] = [:]

    public init(criteria: Criteria) {
        self.criteria = criteria
    }

    /// Adds one run: its profile and its trace's modules (whose other functions a listed name must
    /// not be part of).
    public mutating func add(_ profile: Profile, modules traceModules: [TraceModule]) {
        var byKey: [FunctionKey: Function] = [:]
        for row in FunctionStatistics([profile]).rows {
            // Costs are sorted: those from the first at maxCost on are slow.
            let fast = Self.countBelow(criteria.maxCost.value, in: row.costs)
            byKey[row.key] = Function(name: "", calls: row.calls, slow: row.costs.count - fast, longest: row.max)
        }
        // A function muted only inside its own calls is a recursion whose outer calls may be slow:
        // it is not one to build without instrumentation.
        for muted in profile.muted where !muted.insideOwnCallsOnly {
            byKey[muted.function.key, default: Function(name: "")].calls += muted.estimatedCalls
            byKey[muted.function.key, default: Function(name: "")].muted = true
        }
        for (key, function) in byKey {
            if let name = GccFunctionName.pattern(for: key.name) {
                functions[name, default: Function(name: name)].add(function)
            } else {
                unnameableFunctions[key.name, default: Function(name: key.name)].add(function)
            }
            tracedCalls += function.calls
        }
        let seen = Set(byKey.keys.map(\.module))
        for module in traceModules where seen.contains(module.name) {
            modules[module.path] = modules[module.path] ?? module
        }
    }

    /// Chooses, once every run is added.
    public mutating func select() {
        func qualifies(_ function: Function) -> Bool {
            (function.muted || function.calls >= criteria.minCalls)
                && Double(function.slow) <= Double(function.calls) * criteria.outliers / 100
        }
        unnameable = unnameableFunctions.values.filter(qualifies).map(\.name).sorted()
        var excluded = Set(functions.values.filter(qualifies).map(\.name))

        // Every other function the program's instrumented modules define: a listed name must not
        // be part of any of them that stays instrumented. Templates and the like keep their full
        // demangled text, which holds the name gcc prints.
        let modules = self.modules.keys.sorted().compactMap { self.modules[$0] }
        var others: [(key: String?, text: String)] = ModuleFunctionNames.names(definedIn: modules).map {
            (GccFunctionName.pattern(for: $0), GccFunctionName.withoutCloneSuffix($0))
        }
        others += unnameableFunctions.keys.map { (nil, GccFunctionName.withoutCloneSuffix($0)) }
        others += functions.keys.map { ($0, $0) }
        // Dropping a name keeps its function instrumented, which may in turn clash with a shorter
        // name: repeat until nothing changes.
        clashing = []
        var changed = true
        while changed {
            changed = false
            for name in excluded.sorted(by: { $0.count > $1.count }) {
                let clash = others.first { other in
                    other.key != name && !(other.key.map(excluded.contains) ?? false) && other.text.contains(name)
                }
                if let clash {
                    excluded.remove(name)
                    clashing.append((name, clash.text))
                    changed = true
                }
            }
        }
        listed = excluded.compactMap { functions[$0] }.sorted { ($0.calls, $1.name) > ($1.calls, $0.name) }
        clashing.sort { $0.name < $1.name }
    }

    /// How many of the sorted `values` are below `limit`.
    private static func countBelow(_ limit: Int64, in values: [Int64]) -> Int {
        var low = 0, high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle] < limit { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
