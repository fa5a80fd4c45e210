/// The reader's warnings, one line each. Damage repeated over thousands of blocks (a file full
/// of holes, say) would bury the first, telling lines: after `limit` lines of the same kind the
/// rest are only counted, and `lines` ends with how many were left out.
struct WarningList {
    static let limit = 20

    private var shown: [String] = []
    private var omitted = 0

    /// A warning about one block or record: shown only while fewer than `limit` have been.
    mutating func add(_ line: String) {
        if shown.count < WarningList.limit { shown.append(line) } else { omitted += 1 }
    }

    var lines: [String] {
        omitted == 0 ? shown : shown + ["\(omitted) more warnings like these were left out"]
    }
}
