/// Pieces the function tables (`top`, `diff`) share: names for a table, a set of runs in words,
/// and their JSON fields.
enum FunctionTable {
    /// `3 runs of app`.
    static func runs(_ statistics: FunctionStatistics) -> String {
        "\(statistics.runs) run\(statistics.runs == 1 ? "" : "s") of "
            + (statistics.programs.isEmpty ? "nothing" : statistics.programs.joined(separator: ", "))
    }
}

/// Function names for a table: the bare name, with the module in brackets when another function of
/// the table has the same name in another module.
struct FunctionNames {
    private var ambiguous: Set<String> = []

    init(_ keys: [FunctionKey]) {
        var modules: [String: String] = [:]
        for key in keys {
            if let module = modules[key.name], module != key.module { ambiguous.insert(key.name) }
            modules[key.name] = key.module
        }
    }

    func name(_ key: FunctionKey) -> String {
        ambiguous.contains(key.name) && !key.module.isEmpty ? "\(key.name) [\(key.module)]" : key.name
    }
}

extension ByteOutput {
    /// `"function":"name","module":"libfoo.so"` (no module when none holds it).
    func writeJSONFunction(_ key: FunctionKey) {
        writeJSONKey("function")
        writeJSONString(key.name)
        if !key.module.isEmpty {
            write(",")
            writeJSONKey("module")
            writeJSONString(key.module)
        }
    }

    /// `"runs":3,"programs":["app"]`.
    func writeJSONRuns(_ statistics: FunctionStatistics) {
        writeJSONKey("runs")
        writeInteger(statistics.runs)
        write(",")
        writeJSONKey("programs")
        write("[")
        for (position, program) in statistics.programs.enumerated() {
            if position > 0 { write(",") }
            writeJSONString(program)
        }
        write("]")
    }

    /// `,"key":milliseconds` for each field.
    func writeJSONMilliseconds(_ fields: [(StaticString, Nanoseconds)]) {
        for (key, time) in fields {
            write(",")
            writeJSONKey(key)
            writeMilliseconds(time)
        }
    }
}
