import ArgumentParser
import CalltraceKit
import Foundation

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a program and record its slow calls.",
        usage: "calltrace record [<options>] -- <program> [<arguments> ...]",
        discussion: """
            Each setting option overrides its CALLTRACE_* variable; without it, the variable from the \
            environment applies (checked by the runtime, which warns once about an invalid value, and \
            about a CALLTRACE_* variable that is no setting, such as a misspelled one), else the default.

            While the program runs, calltrace record survives the signals that would end it (such as \
            a kill(0, SIGTERM) from the program, or Ctrl-C), and then exits with the program's \
            status (128 + N after signal N). It does not forward signals: to stop the program, \
            signal the program or its process group.

            Traces of child processes (and of the program before an exec) go next to the \
            program's trace under their own names (calltrace-<pid>.trace).

            When the program has ended, the names and source lines of the functions each trace \
            uses are stored in it (see calltrace symbolize), so it reads after the program was \
            rebuilt or deleted, or on another machine; --no-symbols leaves them out.

            Examples:
              calltrace record -o app.trace -- ./app --input big.txt   # calls >= 10 ms
              calltrace record -t 1ms --threads all -o app.trace -- ./app
              calltrace record -t 0 -o all.trace -- ./app              # every call
            """
    )

    // Value options take their value unconditionally, so that `-t -5ms` says "negative" rather
    // than "missing value".
    @Option(name: [.customShort("t"), .long], parsing: .unconditional,
            help: SettingArgument.help(.threshold, valueName: "duration"))
    var threshold: String?

    @Option(name: .shortAndLong, parsing: .unconditional,
            help: ArgumentHelp("The trace file to write; an existing file is replaced, an existing directory "
                               + "gets calltrace-<pid>.trace, %p stands for the program's pid. Default: "
                               + "CALLTRACE_OUTPUT from the environment when it is set, else "
                               + "calltrace-<pid>.trace in the current directory (neither replaces a file: "
                               + "a taken name becomes name-1.trace, name-2.trace, ...).", valueName: "file"))
    var output: FilePath?

    @Option(parsing: .unconditional, help: SettingArgument.help(.threads, valueName: "main|all"))
    var threads: String?

    @Option(parsing: .unconditional, help: SettingArgument.help(.maxDepth, valueName: "frames"))
    var maxDepth: String?

    @Option(parsing: .unconditional, help: SettingArgument.help(.buffer, valueName: "size"))
    var buffer: String?

    @Option(parsing: .unconditional, help: SettingArgument.help(.limit, valueName: "size"))
    var limit: String?

    @Option(parsing: .unconditional, help: SettingArgument.help(.mute, valueName: "auto|hook|off"))
    var mute: String?

    @Option(parsing: .unconditional, help: SettingArgument.help(.frame, valueName: "duration"))
    var frame: String?
    @Option(parsing: .unconditional, help: SettingArgument.help(.hang, valueName: "duration"))
    var hang: String?
    // Unconditional: a spec starting with an exclusion (`--filter -log_*`) is the option's value.
    @Option(parsing: .unconditional, help: SettingArgument.help(.filter, valueName: "spec"))
    var filter: String?

    @Flag(help: "Do not store the names the trace uses in it when the program ends (then they come from the program's files when the trace is read).")
    var noSymbols = false

    @Argument(parsing: .captureForPassthrough,
              help: ArgumentHelp("The program to run and its arguments, after --.", valueName: "program"))
    var command: [String] = []

    /// The command without the `--` that separates it from calltrace's options.
    private var program: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

    /// The program and its arguments as bytes: the last arguments calltrace got (the parser
    /// captures everything after `--` to the end), as the kernel gave them.
    private var programBytes: [[UInt8]] { Array(RawArguments.all.suffix(program.count)) }

    /// The options that set a runtime setting, with their flags.
    private var settingOptions: [(flag: String, setting: RuntimeSetting, value: String?)] {
        [("--threshold", .threshold, threshold), ("--threads", .threads, threads),
         ("--max-depth", .maxDepth, maxDepth), ("--buffer", .buffer, buffer), ("--limit", .limit, limit),
         ("--mute", .mute, mute),
         ("--frame", .frame, frame), ("--hang", .hang, hang), ("--filter", .filter, filter)]
    }

    func validate() throws {
        // Passthrough capture swallows a leading --help/-h; only after `--` does it belong to the program.
        if let first = command.first, first == "--help" || first == "-h" {
            throw CleanExit.helpRequest(self)
        }
        for option in settingOptions {
            if let value = option.value { try SettingArgument.check(value, flag: option.flag, setting: option.setting) }
        }
        if program.isEmpty {
            throw ValidationError("missing the program to record: calltrace record [<options>] -- <program> [<arguments> ...]")
        }
    }

    func run() throws {
        try Diagnostics.run {
            let environment = Environment.current()
            let destination = try TraceDestination.resolve(option: output, environment: environment)
            let runtime = try RuntimeLocator.find(environment: environment)
            let directory = try RecordDirectory.create(in: destination.directory)
            let runner = ProgramRunner(arguments: programBytes,
                                       environment: childEnvironment(environment, runtime: runtime, directory: directory))
            let shield = SignalShield.raise()
            let pid: pid_t
            do {
                pid = try runner.spawn()
            } catch {
                shield.lower()
                _ = directory.remove()
                throw error
            }
            let termination = try ProgramRunner.wait(for: pid)
            let outcome = TraceCollector(directory: directory, destination: destination, programPid: pid).collect()
            shield.lower()
            Diagnostics.startOwnLine()
            if !noSymbols { storeSymbols(outcome) }
            report(outcome, directory: directory)
            if termination.shellStatus != 0 { throw ExitCode(termination.shellStatus) }
        }
    }

    /// The program's environment: the runtime preloaded, its output in `record`'s directory, and
    /// the settings given as options. Settings not given stay as the environment has them.
    private func childEnvironment(_ inherited: Environment, runtime: FilePath,
                                  directory: RecordDirectory) -> Environment {
        var environment = inherited
        let preload = environment["LD_PRELOAD"].flatMap { $0.isEmpty ? nil : $0 }
        environment["LD_PRELOAD"] = preload.map { runtime.bytes + Array(":".utf8) + $0 } ?? runtime.bytes
        // Also what makes the runtime record at all: it records only when a setting is present.
        environment[RuntimeSetting.output.variable] = directory.outputTemplate.bytes
        for option in settingOptions {
            // validate() checked it with the runtime's parser: handed on as written.
            if let value = option.value { environment[option.setting.variable] = Array(value.utf8) }
        }
        return environment
    }

    private func report(_ outcome: TraceCollector.Outcome, directory: RecordDirectory) {
        let name = program.first ?? "the program"
        outcome.failures.forEach(Diagnostics.warning)
        if let path = outcome.programTrace {
            reportTrace(at: path)
        } else if outcome.failures.isEmpty {
            Diagnostics.note("no trace written by \(name): was it built with -finstrument-functions "
                             + "(and linked dynamically, so that LD_PRELOAD applies)?")
        }
        if !outcome.otherTraces.isEmpty {
            let count = outcome.otherTraces.count
            let names = outcome.otherTraces.prefix(5).map { "\($0.name)" }.joined(separator: ", ")
                + (count > 5 ? ", ..." : "")
            let place = outcome.otherTraces[0].directory
            Diagnostics.note("\(count) more trace\(count == 1 ? "" : "s") (child processes, or \(name) before an exec) "
                             + "written to \(place): \(names)")
        }
        if !outcome.removedDirectory && outcome.failures.isEmpty {
            Diagnostics.note("processes \(name) left running still write traces into \(directory.path); "
                             + "remove it when they are done")
        }
    }

    /// Stores the names each trace uses into it. A trace still being written (by a process the
    /// program left running) is left as it is, with a note.
    private func storeSymbols(_ outcome: TraceCollector.Outcome) {
        signal(SIGXFSZ, SIG_IGN)  // as `symbolize` does (Symbolize.store); the program has ended
        for path in [outcome.programTrace].compactMap({ $0 }) + outcome.otherTraces {
            do {
                _ = try ProgressLine.reading(path, TraceReader.Options()) { options in
                    try TraceSymbolizer.symbolize(path: path, withinLimit: true, progress: options.progress,
                                                  warn: Diagnostics.warning)
                }
            } catch TraceSymbolizer.Failure.pastLimit(let path, let limit, let size) {
                Diagnostics.note("\(TraceSymbolizer.Failure.pastLimit(path: path, limit: limit, size: size))")
            } catch TraceSymbolizer.Failure.stillRunning(_, let pid) {
                Diagnostics.note("\(path) is still being written by pid \(pid): its names are not stored "
                                 + "(run calltrace symbolize on it when that process has ended)")
            } catch {
                // A trace that cannot be read is reported by reportTrace; one that cannot be
                // written stays readable from the program's files.
                if error is TraceSymbolizer.Failure { Diagnostics.warning("\(error)") }
            }
        }
    }

    private func reportTrace(at path: FilePath) {
        do {
            let trace = try TraceReader.read(path: path, options: TraceReader.Options(keepCalls: false))
            let count = trace.callCount
            Diagnostics.note("trace written to \(path) (\(count) call\(count == 1 ? "" : "s") recorded)")
            if count == 0 {
                let threshold = Threshold.format(Nanoseconds(Int64(clamping: trace.header.thresholdNs)))
                // The runtime creates a trace only once instrumented code runs: the program was built for it.
                Diagnostics.note("no call lasted \(threshold) or more (the threshold)")
            }
            TraceLoading.reportWarnings(of: trace)
        } catch {
            Diagnostics.warning("trace written to \(path), but it cannot be read: \(error)")
        }
    }
}
