import Foundation

/// `reference-docs [--cli PATH] DIRECTORY`: writes the reference pages that must not drift from the
/// code into DIRECTORY (docs/reference in the checkout):
///
/// - settings.md, from the runtime's settings table (CShims/settings/include/ct_settings.inc, as
///   compiled: the rows the runtime parses and `calltrace record` checks);
/// - commands.md, from the CLI's own help: the command list of `--experimental-dump-help` (what the
///   manual page is generated from) and each subcommand's `calltrace help` text.
///
/// ReferenceDocsTests runs it and fails when the committed pages differ from what it writes. The CLI
/// is the `calltrace` next to this executable unless --cli names another.
@main
enum ReferenceDocs {
    /// The command that regenerates the committed pages, for messages.
    static let regenerate = "swift build && .build/debug/reference-docs docs/reference"

    static func main() {
        do {
            let (cli, directory) = try arguments(Array(CommandLine.arguments.dropFirst()))
            let pages = [("settings.md", SettingsPage.markdown()), ("commands.md", try CommandsPage.markdown(cli: cli))]
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (name, text) in pages {
                try Data(text.utf8).write(to: URL(fileURLWithPath: directory).appendingPathComponent(name))
            }
        } catch let failure as Failure {
            FileHandle.standardError.write(Data("reference-docs: error: \(failure.message)\n".utf8))
            exit(failure.status)
        } catch {
            FileHandle.standardError.write(Data("reference-docs: error: \(error.localizedDescription)\n".utf8))
            exit(1)
        }
    }

    /// The CLI to ask and the directory to write, from the command line.
    private static func arguments(_ arguments: [String]) throws -> (cli: String, directory: String) {
        var cli: String?, directory: String?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--cli":
                guard let path = rest.popFirst() else { throw Failure("--cli needs the path of a calltrace executable", status: 2) }
                cli = path
            case "-h", "--help":
                print("usage: reference-docs [--cli PATH] DIRECTORY   (writes settings.md and commands.md: \(regenerate))")
                exit(0)
            case _ where argument.hasPrefix("-"):
                throw Failure("unknown option \(argument) (usage: reference-docs [--cli PATH] DIRECTORY)", status: 2)
            default:
                guard directory == nil else { throw Failure("one directory only, not \(directory!) and \(argument)", status: 2) }
                directory = argument
            }
        }
        guard let directory else { throw Failure("name the directory to write, such as docs/reference (\(regenerate))", status: 2) }
        return (cli ?? siblingCLI(), directory)
    }

    /// `calltrace` in this executable's directory (both are products of one `swift build`).
    private static func siblingCLI() -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("calltrace").path
    }
}

/// A failure reported in one line, with the exit status to leave with.
struct Failure: Error {
    var message: String
    var status: Int32

    init(_ message: String, status: Int32 = 1) {
        self.message = message
        self.status = status
    }
}
