import ArgumentParser
import CalltraceKit
import Foundation

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Hold traces to a budget or a baseline: exit 1 over it, 0 within.",
        discussion: """
            The budget is a TOML file (docs/guide.md, "calltrace check: budgets"):
              [calls]            # the longest any one call of the function may take
              load_assets = "50ms"
              "parse".p90 = "15ms"   # p90 of its worst call per trace, over all traces
              [marks]            # the latest each mark may come, from process start
              "first frame" = "400ms"
              [frames]
              max_dropped_at_once = 2
              max_drop_events = 3
              [spans]            # the longest one span of the name may take, per trace
              "open document" = "300ms"
              "save".p90 = "200ms"   # percentiles over every trace given together

            Violations go to stdout (`app.trace: load_assets took 62.10 ms, budget 50 ms`), then exit 1; \
            within budget, one `ok:` line and exit 0. A budgeted function with no recorded call is a \
            warning, not a violation.

            --baseline BASE --max-regression 20% holds the traces (a trace or a directory of runs) to \
            BASE's runs as `calltrace diff BASE NEW` compares them: each function both sides recorded, \
            by its total per run, and the whole run (process start to exit). One fails the check when \
            diff calls it a regression (with 4 or more runs a side at --alpha 0.05: a Mann-Whitney U \
            test's p-value under --alpha; a change over --noise-floor) and it is more than the \
            tolerance slower than in BASE. A function only one side recorded is not held to the \
            tolerance (its callers and the whole run are). With fewer runs no test can decide: a \
            warning says how many are needed, and the plain ratio decides. Exit 1 names each \
            slowdown (`after/ against before/: compress took 151.20 ms per run, baseline 100.30 ms: \
            +50.7% (p = 0.008), over the 20% allowed`).

            --junit FILE and --markdown FILE also write the outcome of every budget and baseline \
            line, as a JUnit XML report and as Markdown for a pull-request comment, whatever the \
            outcome. Bad input (a budget file or trace that cannot be used, a missing baseline, a \
            tolerance that is not a percentage, a baseline of another program): one error line, \
            exit 2.

            Examples:
              calltrace check --budget launch.toml runs/
              calltrace check after/ --baseline before/ --max-regression 20%
            """
    )

    @Option(help: ArgumentHelp("The budget file (TOML).", valueName: "file"))
    var budget: FilePath?

    @Argument(help: "Trace files, or directories whose *.trace files are read; each is held to the budget on its own, span and call percentiles over all of them together; with --baseline, all of them are the new runs.")
    var traces: [FilePath]

    @Option(help: ArgumentHelp("Hold the traces to these runs: a trace file or a directory of *.trace files (with --max-regression).",
                               valueName: "base"))
    var baseline: FilePath?

    // Unconditional: `--max-regression -5%` is the option's (bad) value, not an unknown option.
    @Option(parsing: .unconditional,
            help: ArgumentHelp("With --baseline: the slowdown allowed, a percentage of the baseline such as 20%; a significant slowdown past it fails.",
                               valueName: "percent"))
    var maxRegression: String?

    @OptionGroup var significance: SignificanceOptions

    @Option(help: ArgumentHelp("Also write a JUnit XML report to this file (one test case per budget line and trace, and per function compared with --baseline, for GitLab, Jenkins and GitHub's test reporters); written whatever the outcome.",
                               valueName: "file"))
    var junit: FilePath?

    @Option(help: ArgumentHelp("Also write the outcome as Markdown to this file (a verdict, the lines that failed or were skipped), for a pull-request comment; written whatever the outcome.",
                               valueName: "file"))
    var markdown: FilePath?

    func run() throws {
        try Diagnostics.run {
            let comparison = try regressionOptions()
            let limits = try budget.map(Self.budget)
            var gate = try comparison.map { try regressionGate(baseline: $0.baseline, tolerance: $0.tolerance) }
            var checked = 0
            var violations = 0
            var output = StandardOutput()
            var junitReport = JUnitReport()
            var markdownReport = MarkdownReport()
            func report(_ name: String, _ check: BudgetCheck) {
                junitReport.add(trace: name, check)
                markdownReport.add(trace: name, check)
                check.warnings.forEach(Diagnostics.warning)
                for line in check.violations { output.write(line + "\n") }
                output.flush()
                violations += check.violations.count
            }
            var percentiles = limits.map(PercentileCheck.init)
            do {
                try ProfileLoading.forEach(traces, lines: false) { profile in
                    if let limits {
                        report(profile.source, BudgetCheck(profile, budget: limits, name: profile.source))
                        percentiles?.add(profile)
                    }
                    gate?.add(profile)
                    if let mismatch = gate?.programMismatch { throw CalltraceError("\(profile.source): \(mismatch)") }
                    checked += 1
                }
            } catch let error as CalltraceError {
                output.flush()
                throw CalltraceError(error.description, exitCode: 2)
            }
            var passed: [String] = []
            if let limits, let percentiles {
                if !percentiles.isEmpty { report(percentiles.name, percentiles.check()) }
                passed.append("\(checked) trace\(checked == 1 ? "" : "s") within budget "
                              + "(\(limits.limitCount) limit\(limits.limitCount == 1 ? "" : "s"))")
            }
            if var gate, let baseline = comparison?.baseline {
                let name = "\(traces.map(\.description).joined(separator: " ")) against \(baseline)"
                let verdict = gate.verdict(name: name)
                report(name, verdict.check)
                passed.append(verdict.summary)
            }
            if let junit { try OutputFile.write(Array(junitReport.xml.utf8), to: junit) }
            if let markdown { try OutputFile.write(Array(markdownReport.text.utf8), to: markdown) }
            if violations > 0 { throw ExitCode.failure }
            for line in passed { output.write("ok: \(line)\n") }
            output.flush()
        }
    }

    /// The budget file, or an error (exit 2) naming it and the problem.
    private static func budget(_ path: FilePath) throws -> Budget {
        do {
            return try Budget.parse(try text(of: path))
        } catch let error as BudgetError {
            throw CalltraceError("\(path): \(error)", exitCode: 2)
        } catch {
            throw CalltraceError("\(path): cannot read the budget file (\(reason(error)))", exitCode: 2)
        }
    }

    /// `--baseline` and `--max-regression` as a share (0.2 for 20%), nil without them; bad input
    /// (options that do not go together, a tolerance that is not a percentage) is one error line, exit 2.
    private func regressionOptions() throws -> (baseline: FilePath, tolerance: Double)? {
        func failure(_ message: String) -> CalltraceError { CalltraceError(message, exitCode: 2) }
        guard budget != nil || baseline != nil || maxRegression != nil else {
            throw failure("nothing to check: give --budget FILE, or --baseline BASE with --max-regression PERCENT, or both")
        }
        guard let baseline else {
            if maxRegression == nil { return nil }
            throw failure("--max-regression needs --baseline BASE: the runs (a trace or a directory of *.trace files) to compare with")
        }
        guard let maxRegression else {
            throw failure("--baseline needs --max-regression, the slowdown to allow, such as --max-regression 20%")
        }
        guard maxRegression.hasSuffix("%"), let percent = Double(maxRegression.dropLast()), percent.isFinite, percent >= 0 else {
            throw failure("--max-regression '\(maxRegression)' is not a percentage: expected the slowdown to allow, such as 20%")
        }
        return (baseline, percent / 100)
    }

    /// The gate `--baseline` asks for, with the baseline's runs read (an error reading them, or a
    /// bad --alpha or --noise-floor, is one line and exit 2).
    private func regressionGate(baseline: FilePath, tolerance: Double) throws -> RegressionGate {
        var gate: RegressionGate
        do {
            gate = RegressionGate(tolerance: tolerance, alpha: try significance.significanceLevel(),
                                  noiseFloor: try significance.floor())
        } catch let error as ValidationError {
            throw CalltraceError(error.message, exitCode: 2)
        }
        do {
            try ProfileLoading.forEach([baseline], lines: false) { gate.addBaseline($0) }
        } catch let error as CalltraceError {
            throw CalltraceError("--baseline: \(error.description)", exitCode: 2)
        }
        return gate
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
