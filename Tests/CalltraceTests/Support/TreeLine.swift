import Foundation

/// The function a `report` tree line names: ` 1|  60.36 ms|  name (blocked 58.20 ms: read pipe)`
/// gives `name`, without its indentation or the marks after it ((unfinished), (unwound), (±...),
/// (preempted ...), (blocked ...)). Nil for a line that is not a call's (a hang's, a heading).
func treeLineName<Line: StringProtocol>(_ line: Line) -> String? {
    let columns = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
    guard columns.count == 3, !columns[0].trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
    var name = Substring(columns[2].drop { $0 == " " })
    while name.hasSuffix(")"), let open = name.range(of: " (", options: .backwards),
          treeLineMarks.contains(where: { name[open.upperBound...].hasPrefix($0) }) {
        name = name[..<open.lowerBound]
    }
    return String(name)
}

private let treeLineMarks = ["unfinished)", "unwound)", "±", "preempted ", "blocked "]
