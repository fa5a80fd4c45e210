import CalltraceSettings
import Foundation
import XCTest

/// The docs cannot drift from the code: docs/reference/ is what `reference-docs` writes now (from
/// the settings table and the CLI's own help), and every relative link in README.md and docs/ leads
/// to a file, and an #anchor into a Markdown file to one of its headings.
final class ReferenceDocsTests: XCTestCase {
    private static let regenerate = "swift build && .build/debug/reference-docs docs/reference"
    private var generator: String { Workspace.products.appendingPathComponent("reference-docs").path }

    /// The pages `reference-docs` writes now, by name.
    private func generated() throws -> [String: String] {
        try Workspace.requireProducts()
        let directory = Workspace.directory("reference")
        let result = try Command.run(generator, ["--cli", Workspace.cli.path, directory.path])
        XCTAssertEqual(result.status, 0, result.description)
        var pages: [String: String] = [:]
        for name in ["settings.md", "commands.md"] {
            pages[name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return pages
    }

    func testTheCommittedReferenceIsWhatTheGeneratorWrites() throws {
        for (name, text) in try generated().sorted(by: { $0.key < $1.key }) {
            let committed = Workspace.packageRoot.appendingPathComponent("docs/reference/\(name)")
            guard let old = try? String(contentsOf: committed, encoding: .utf8) else {
                XCTFail("docs/reference/\(name) is missing: write it with `\(Self.regenerate)`")
                continue
            }
            guard old != text else { continue }
            let oldLines = old.components(separatedBy: "\n"), newLines = text.components(separatedBy: "\n")
            let common = min(oldLines.count, newLines.count)
            let line = (0..<common).first { oldLines[$0] != newLines[$0] } ?? common
            let was = line < oldLines.count ? oldLines[line] : "(the end)"
            let now = line < newLines.count ? newLines[line] : "(the end)"
            XCTFail("""
                docs/reference/\(name) is out of date: regenerate it with `\(Self.regenerate)` and commit it.
                First difference, line \(line + 1):
                  committed: \(was)
                  generated: \(now)
                """)
        }
    }

    /// The pages hold what they are made from: a row per setting of the table, a section per
    /// subcommand `calltrace --help` lists, with that subcommand's help.
    func testThePagesCoverEverySettingAndSubcommand() throws {
        let pages = try generated()
        let settings = pages["settings.md"] ?? "", commands = pages["commands.md"] ?? ""
        XCTAssertGreaterThan(ct_setting_count(), 0)
        for index in 0..<ct_setting_count() {
            guard let row = ct_setting_row(index)?.pointee else { continue }
            let variable = String(cString: row.variable)
            XCTAssertTrue(settings.contains("\n| [`\(variable)`](../guide.md#\(variable.lowercased())) | "),
                          "settings.md has no row for \(variable):\n\(settings)")
        }
        let help = try calltrace(["--help"]).stdout
        let names = help.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n").compactMap { line in
            line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
        }.filter { $0.range(of: "^[a-z-]+$", options: .regularExpression) != nil } ?? []
        XCTAssertTrue(names.contains("record") && names.contains("exclude-list"), help)
        for name in names {
            XCTAssertTrue(commands.contains("\n## \(name)\n"), "commands.md has no section for \(name)")
            let first = try calltrace(["help", name], environment: ["COLUMNS": "100"]).stdout
                .split(separator: "\n").first.map(String.init) ?? "?"
            XCTAssertTrue(commands.contains("## \(name)\n\n```text\n\(first)\n"), "\(name): \(first)")
        }
    }

    func testTheGeneratorRefusesBadArgumentsInOneLine() throws {
        try Workspace.requireProducts()
        for arguments in [[], ["--bogus", "x"], ["a", "b"], ["--cli"],
                          ["--cli", Workspace.directory("no-cli").appendingPathComponent("calltrace").path,
                           Workspace.directory("reference-bad").path]] {
            let result = try Command.run(generator, arguments)
            XCTAssertNotEqual(result.status, 0, "\(arguments): \(result)")
            XCTAssertTrue(result.stderr.hasPrefix("reference-docs: error: "), "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "\(arguments): one line:\n\(result.stderr)")
        }
    }

    /// Every relative link and image in README.md and docs/**/*.md names a file or directory that
    /// exists, and a #fragment into a Markdown file one of its headings (as GitHub makes anchors).
    func testRelativeLinksInTheDocsResolve() throws {
        let root = Workspace.packageRoot
        var files = [root.appendingPathComponent("README.md")]
        let docs = root.appendingPathComponent("docs")
        for case let url as URL in FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil) ?? .init()
        where url.pathExtension == "md" {
            files.append(url)
        }
        XCTAssertTrue(files.contains { $0.lastPathComponent == "guide.md" }, "docs/guide.md is checked too")
        var checked = 0, broken: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            let name = String(file.path.dropFirst(root.path.count + 1))
            for target in MarkdownLinks.targets(in: text) {
                guard !MarkdownLinks.isExternal(target) else { continue }
                checked += 1
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let path = parts[0].removingPercentEncoding ?? parts[0]
                let destination = path.isEmpty ? file : file.deletingLastPathComponent().appendingPathComponent(path)
                guard FileManager.default.fileExists(atPath: destination.path) else {
                    broken.append("\(name): \(target): no such file")
                    continue
                }
                guard parts.count == 2, destination.pathExtension == "md" else { continue }
                let anchors = MarkdownLinks.anchors(in: try String(contentsOf: destination, encoding: .utf8))
                if !anchors.contains(parts[1]) {
                    broken.append("\(name): \(target): no heading makes the anchor #\(parts[1])")
                }
            }
        }
        XCTAssertGreaterThan(checked, 20, "the links were found")
        XCTAssertEqual(broken, [], "broken links:\n" + broken.joined(separator: "\n"))
    }

    /// The anchor rules themselves, on headings of the kinds the docs use.
    func testAnchorsAreMadeAsGitHubMakesThem() {
        let text = """
            # calltrace
            ## Two commands
            ### `CALLTRACE_LIMIT`
            ## The flight recorder (`CALLTRACE_LIMIT`)
            ## Names, lines and debug files
            ## Two commands
            ```sh
            # not a heading
            ```
            """
        XCTAssertEqual(MarkdownLinks.anchors(in: text),
                       ["calltrace", "two-commands", "calltrace_limit", "the-flight-recorder-calltrace_limit",
                        "names-lines-and-debug-files", "two-commands-1"])
        XCTAssertEqual(MarkdownLinks.targets(in: "see [a](b.md#c), ![p](docs/x.png) and `[no](link)`\n[ref]: d.md\n"),
                       ["b.md#c", "docs/x.png", "d.md"])
    }
}

/// Links and headings of Markdown text, outside code blocks and code spans.
enum MarkdownLinks {
    /// Link and image destinations, and reference definitions.
    static func targets(in text: String) -> [String] {
        var targets: [String] = []
        for line in proseLines(text) {
            let prose = line.replacingOccurrences(of: "`[^`]*`", with: "", options: .regularExpression)
            targets += matches(#"\]\(([^)\s]+)(?:\s+"[^"]*")?\)"#, in: prose)
            targets += matches(#"^\s{0,3}\[[^\]]+\]:\s*(\S+)"#, in: prose)
        }
        return targets
    }

    static func isExternal(_ target: String) -> Bool {
        target.range(of: "^[A-Za-z][A-Za-z0-9+.-]*:", options: .regularExpression) != nil
    }

    /// The anchors GitHub gives the headings: the text without its Markdown, lower case, every
    /// character but letters, digits, '-', '_' and spaces dropped, spaces made '-'; a repeat gets -1, -2...
    static func anchors(in text: String) -> [String] {
        var seen: [String: Int] = [:], anchors: [String] = []
        for line in proseLines(text) {
            guard let heading = matches(#"^#{1,6}\s+(.*?)\s*#*\s*$"#, in: line).first else { continue }
            let plain = heading.replacingOccurrences(of: #"\[([^\]]*)\]\([^)]*\)"#, with: "$1", options: .regularExpression)
            var slug = String(plain.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_" ? character : nil
            })
            if let count = seen[slug] {
                seen[slug] = count + 1
                slug += "-\(count + 1)"
            } else {
                seen[slug] = 0
            }
            anchors.append(slug)
        }
        return anchors
    }

    /// The lines outside fenced code blocks.
    private static func proseLines(_ text: String) -> [String] {
        var inFence = false, lines: [String] = []
        for line in text.components(separatedBy: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
            } else if !inFence {
                lines.append(line)
            }
        }
        return lines
    }

    /// The first capture group of each match of `pattern` in `text`.
    private static func matches(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }
}
