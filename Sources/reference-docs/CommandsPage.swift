import Foundation

/// docs/reference/commands.md: the CLI's subcommands as its own help lists them, each with the text
/// `calltrace help SUBCOMMAND` prints at a fixed width.
enum CommandsPage {
    /// The width help is wrapped to (COLUMNS), so the page does not depend on the terminal.
    static let columns = 100

    static func markdown(cli: String) throws -> String {
        let commands = try subcommands(cli: cli)
        var text = """
            # Commands

            <!-- Generated from the CLI's own help by reference-docs; do not edit.
                 Regenerate: \(ReferenceDocs.regenerate) -->

            Every subcommand's help, as `calltrace help SUBCOMMAND` (or `calltrace SUBCOMMAND --help`)
            prints it; `man calltrace` is made from the same help (Scripts/install). What each is for,
            task by task: the [guide](../guide.md).

            | command | what it does |
            | --- | --- |

            """
        for command in commands {
            text += "| [`\(command.name)`](#\(command.name)) | \(command.abstract.replacingOccurrences(of: "|", with: "\\|")) |\n"
        }
        text += "\n## calltrace\n\n" + block(try run(cli, ["--help"]))
        for command in commands {
            text += "\n## \(command.name)\n\n" + block(try run(cli, ["help", command.name]))
        }
        return text
    }

    /// The subcommands users see, in the CLI's order, from the help dump the manual is made from.
    private static func subcommands(cli: String) throws -> [(name: String, abstract: String)] {
        let dump = try run(cli, ["--experimental-dump-help"])
        guard let root = try? JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any],
              let command = root["command"] as? [String: Any],
              let subcommands = command["subcommands"] as? [[String: Any]] else {
            throw Failure("\(cli) --experimental-dump-help did not give a command with subcommands")
        }
        return subcommands.compactMap { subcommand in
            // `help` is the argument parser's own: the page is what it prints.
            guard subcommand["shouldDisplay"] as? Bool ?? true, let name = subcommand["commandName"] as? String,
                  name != "help" else {
                return nil
            }
            return (name, subcommand["abstract"] as? String ?? "")
        }
    }

    /// A fenced block of plain text, its trailing blank lines dropped.
    private static func block(_ text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return "```text\n" + lines.joined(separator: "\n") + "\n```\n"
    }

    /// What `cli arguments` prints on stdout, help wrapped at `columns`.
    private static func run(_ cli: String, _ arguments: [String]) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: cli) else {
            throw Failure("\(cli) is not an executable calltrace (build it: swift build; or name one with --cli)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: cli)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = String(columns)
        environment["LINES"] = "50"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw Failure("\(cli) \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
