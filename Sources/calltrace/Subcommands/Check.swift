import ArgumentParser
import CalltraceKit
import Foundation

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Hold traces to a budget: exit 1 with one line per limit exceeded, 0 within budget.",
        discussion: """
            The budget is a TOML file (README: "check"):
              [calls]            # the longest any one call of the function may take
              load_assets = "50ms"
              [marks]            # the latest each mark may come, from process start
              "first frame" = "400ms"
              [frames]
              max_dropped_at_once = 2
              max_drop_events = 3
              [spans]            # the longest one span of the name may take, per trace
              "open document" = "300ms"
              "save".p90 = "200ms"   # percentiles over every trace given together

            Violations go to stdout (`app.trace: load_assets took 62.10 ms, budget 50 ms`), then exit 1; \
            within budget, one `ok:` line and exit 0. --junit FILE also writes the outcome of every \
            budget line as a JUnit XML report. A budget file that cannot be used, or a trace that \
            cannot be read: one error line, exit 2. A budgeted function with no recorded call is a \
            warning, not a violation.

            Example:
              calltrace check --budget launch.toml runs/
            """
    )

    @Option(help: ArgumentHelp("The budget file (TOML).", valueName: "file"))
    var budget: FilePath

    @Argument(help: "Trace files, or directories whose *.trace files are read; each is checked on its own, span percentiles over all of them together.")
    var traces: [FilePath]

    @Option(help: ArgumentHelp("Also write a JUnit XML report to this file (one test case per budget line and trace, for GitLab, Jenkins and GitHub's test reporters); written whatever the outcome.",
                               valueName: "file"))
    var junit: FilePath?

    func run() throws {
        try Diagnostics.run {
            let limits: Budget
            do {
                let text = try Self.text(of: budget)
                limits = try Budget.parse(text)
            } catch let error as BudgetError {
                throw CalltraceError("\(budget): \(error)", exitCode: 2)
            } catch {
                throw CalltraceError("\(budget): cannot read the budget file (\(Self.reason(error)))", exitCode: 2)
            }
            var checked = 0
            var violations = 0
            var output = StandardOutput()
            var report = JUnitReport()
            var percentiles = SpanPercentileCheck(limits)
            do {
                try ProfileLoading.forEach(traces, lines: false) { profile in
                    let check = BudgetCheck(profile, budget: limits, name: profile.source)
                    report.add(trace: profile.source, check)
                    check.warnings.forEach(Diagnostics.warning)
                    for line in check.violations { output.write(line + "\n") }
                    output.flush()
                    violations += check.violations.count
                    checked += 1
                    percentiles.add(profile)
                }
            } catch let error as CalltraceError {
                output.flush()
                throw CalltraceError(error.description, exitCode: 2)
            }
            if !percentiles.isEmpty {
                let check = percentiles.check()
                report.add(trace: percentiles.name, check)
                check.warnings.forEach(Diagnostics.warning)
                for line in check.violations { output.write(line + "\n") }
                output.flush()
                violations += check.violations.count
            }
            if let junit { try OutputFile.write(Array(report.xml.utf8), to: junit) }
            if violations > 0 { throw ExitCode.failure }
            output.write("ok: \(checked) trace\(checked == 1 ? "" : "s") within budget "
                         + "(\(limits.limitCount) limit\(limits.limitCount == 1 ? "" : "s"))\n")
            output.flush()
        }
    }

    private struct ReadFailure: Error {
        let reason: String
    }

    /// The budget file's text (its path need not be UTF-8; its contents must be).
    private static func text(of path: FilePath) throws -> String {
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw ReadFailure(reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw ReadFailure(reason: String(cString: strerror(errno))) }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw ReadFailure(reason: "not UTF-8 text") }
        return text
    }

    private static func reason(_ error: Error) -> String {
        if let failure = error as? ReadFailure { return failure.reason }
        let cocoa = error as NSError
        if let posix = cocoa.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        return cocoa.localizedDescription
    }
}
