import ArgumentParser
import CalltraceKit
import Foundation

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a program and record its slow calls.",
        usage: "calltrace record [<options>] -- <program> [<arguments> ...]"
    )

    enum Threads: String, ExpressibleByArgument, CaseIterable {
        case main, all
    }

    @Option(name: [.customShort("t"), .long],
            help: "Record calls lasting at least this long: a number with ns, us, ms or s (a bare number is ms); 0 records every call.")
    var threshold: String = "10ms"

    @Option(name: .shortAndLong,
            help: "The trace file to write; an existing file is replaced. Default: calltrace-<pid>.trace in the current directory.")
    var output: String?

    @Option(help: "Which threads to record: main or all. Default: main.")
    var threads: Threads?

    @Option(help: "Record calls nested at most this deep on each thread (1 to 4194304). Default: 4096.")
    var maxDepth: Int?

    @Option(help: "Trace buffer size, such as 16M or 512k (at least 8k). Raise it if calls are dropped. Default: 16M.")
    var buffer: String?

    @Argument(parsing: .captureForPassthrough,
              help: ArgumentHelp("The program to run and its arguments, after --.", valueName: "program"))
    var command: [String] = []

    /// The command without the `--` that separates it from calltrace's options.
    private var program: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

    func validate() throws {
        // Passthrough capture swallows a leading --help/-h; only after `--` does it belong to the program.
        if let first = command.first, first == "--help" || first == "-h" {
            throw CleanExit.helpRequest(self)
        }
        _ = try ThresholdArgument.parse(threshold, flag: "--threshold")
        if let maxDepth, !(1...4_194_304).contains(maxDepth) {
            throw ValidationError("--max-depth \(maxDepth) is out of range: use a whole number from 1 to 4194304")
        }
        if let buffer, BufferSize.parse(buffer) == nil {
            throw ValidationError("--buffer '\(buffer)' is not a size: use a whole number of bytes with k, M or G, "
                                  + "at least 8k, such as 16M")
        }
        if program.isEmpty {
            throw ValidationError("missing the program to record: calltrace record [<options>] -- <program> [<arguments> ...]")
        }
    }

    func run() throws {
        try Diagnostics.run {
            let pattern = try outputPattern()
            let runner = ProgramRunner(arguments: program, environment: try childEnvironment(output: pattern))
            let pid = try runner.spawn()
            let termination = try ProgramRunner.wait(for: pid)
            reportTrace(at: pattern.replacingOccurrences(of: "%p", with: String(pid)))
            if termination.shellStatus != 0 { throw ExitCode(termination.shellStatus) }
        }
    }

    /// The path handed to the runtime, `%p` standing for the pid. The runtime never overwrites a
    /// file, so a file named by `-o` is removed first.
    private func outputPattern() throws -> String {
        guard let output else { return "calltrace-%p.trace" }
        var info = stat()
        if !output.contains("%p"), lstat(output, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw CalltraceError("-o \(output) exists and is not a regular file")
            }
            guard unlink(output) == 0 else {
                throw CalltraceError("cannot replace \(output): \(String(cString: strerror(errno)))")
            }
        }
        return output
    }

    private func childEnvironment(output: String) throws -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        let runtime = try RuntimeLocator.find(environment: environment)
        let preload = environment["LD_PRELOAD"].flatMap { $0.isEmpty ? nil : $0 }
        environment["LD_PRELOAD"] = preload.map { runtime + ":" + $0 } ?? runtime
        // validate() accepted it; the runtime gets whole nanoseconds, so both sides agree exactly.
        let thresholdNs = Threshold.parse(threshold)?.value ?? 0
        environment["CALLTRACE_THRESHOLD"] = "\(thresholdNs)ns"
        environment["CALLTRACE_OUTPUT"] = output
        if let threads { environment["CALLTRACE_THREADS"] = threads.rawValue }
        if let maxDepth { environment["CALLTRACE_MAX_DEPTH"] = String(maxDepth) }
        if let buffer { environment["CALLTRACE_BUFFER"] = buffer }
        return environment
    }

    private func reportTrace(at path: String) {
        let name = program.first ?? "the program"
        guard access(path, F_OK) == 0 else {
            Diagnostics.note("no trace written: was \(name) built with -finstrument-functions "
                             + "(and linked dynamically, so that LD_PRELOAD applies)?")
            return
        }
        do {
            let trace = try TraceReader.read(path: path, options: TraceReader.Options(keepCalls: false))
            let count = trace.callCount
            Diagnostics.note("trace written to \(path) (\(count) call\(count == 1 ? "" : "s") recorded)")
            if count == 0 {
                Diagnostics.note("no call lasted \(threshold) or more, or \(name) was not built with -finstrument-functions")
            }
            TraceLoading.reportWarnings(of: trace)
        } catch {
            Diagnostics.warning("trace written to \(path), but it cannot be read: \(error)")
        }
    }
}
