import CalltraceSettings

/// docs/reference/settings.md: one row per row of the settings table, in the table's order.
enum SettingsPage {
    static func markdown() -> String {
        var text = """
            # Settings

            <!-- Generated from the settings table (CShims/settings/include/ct_settings.inc) by reference-docs;
                 do not edit. Regenerate: \(ReferenceDocs.regenerate) -->

            The runtime reads these environment variables once, at start-up. A program built for calltrace
            and run with none of them set runs untraced and writes no trace. An invalid value prints one
            warning naming the variable, and the default is used: the program always runs. Set-uid and
            set-gid programs ignore them. `calltrace record`'s setting options (`--threshold`, `--limit`,
            `--filter`...) set the same variables and accept exactly the values below: the runtime's parser
            and `record`'s checks and option help are built from the same table
            ([commands](commands.md#record)). Each variable links to what it does in detail, in the
            [guide](../guide.md#settings-in-detail).

            | variable | default | takes | what it does |
            | --- | --- | --- | --- |

            """
        for index in 0..<ct_setting_count() {
            guard let row = ct_setting_row(index)?.pointee else { continue }
            let variable = String(cString: row.variable), defaultValue = String(cString: row.default_value)
            let cells = ["[`\(variable)`](../guide.md#\(variable.lowercased()))",
                         defaultValue.isEmpty ? "none" : "`\(defaultValue)`",
                         cell(String(cString: row.expected)),
                         cell(sentence(String(cString: row.help)))]
            text += "| " + cells.joined(separator: " | ") + " |\n"
        }
        text += """

            The compiler wrappers read variables of their own (`CALLTRACE_CC`, `CALLTRACE_CXX`,
            `CALLTRACE_INSTRUMENT`, `CALLTRACE_EXCLUDE`, `CALLTRACE_RUNTIME`, `CALLTRACE_CACHE`: the
            [guide](../guide.md#building-a-program-for-calltrace)), and the CLI reads `CALLTRACE_DEBUG_DIR`
            ([debug files](../guide.md#names-lines-and-debug-files)), `NO_COLOR` and `CLICOLOR_FORCE`.

            """
        return text
    }

    /// A table cell: the characters Markdown would read as a cell's end, emphasis or a tag escaped.
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "*", with: "\\*")
            .replacingOccurrences(of: "<", with: "\\<")
    }

    /// The table's help is one sentence without its capital and final period.
    private static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst() + "."
    }
}
