import Foundation

/// The outcome of running a program: what it printed and how it ended.
struct CommandResult: CustomStringConvertible {
    var status: Int32           // exit status, or 128 + signal like a shell
    var signal: Int32?          // the signal that killed it, if one did
    var stdout: String
    var stderr: String
    var timedOut = false        // killed (with its process group) after the timeout

    var description: String {
        (timedOut ? "TIMED OUT, killed\n" : "") + "status \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)"
    }
}

enum Command {
    /// Runs `executable` with `arguments`, adding `environment` to this process's environment
    /// (without any CALLTRACE_* setting of this process). After `timeout` seconds the program and
    /// its process group (children it forked) are killed and the result says `timedOut`: a hang
    /// fails the test instead of blocking the suite. Tests that pin "does not hang" pass a short
    /// timeout; the default only keeps any hang from blocking the suite for ever.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String] = [], environment: [String: String] = [:],
                    currentDirectory: URL? = nil, stdin: String? = nil,
                    timeout: TimeInterval = 600) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for key in env.keys where key.hasPrefix("CALLTRACE_") { env[key] = nil }
        env.merge(environment) { _, new in new }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        // Output goes to files, not pipes: nothing to drain while the program runs.
        let outURL = Workspace.temporary.appendingPathComponent("out-\(UUID().uuidString)")
        let errURL = Workspace.temporary.appendingPathComponent("err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        var timedOut = false
        if ended.wait(timeout: .now() + timeout) == .timedOut {
            // Foundation starts each program in a process group of its own.
            timedOut = true
            kill(-process.processIdentifier, SIGKILL)
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        try? out.close()
        try? err.close()
        let outData = (try? Data(contentsOf: outURL)) ?? Data()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        let signalled = process.terminationReason == .uncaughtSignal
        let status = signalled ? 128 + process.terminationStatus : process.terminationStatus
        return CommandResult(status: status, signal: signalled ? process.terminationStatus : nil,
                             stdout: String(decoding: outData, as: UTF8.self),
                             stderr: String(decoding: errData, as: UTF8.self), timedOut: timedOut)
    }
}

/// Runs the built `calltrace` with `arguments` (in `directory`, with `environment` added): the one
/// way the tests run the CLI. One timeout for every run, `Command.calltraceTimeout`: a view or a
/// record of a test fixture takes seconds, so a hang fails its test within minutes instead of
/// blocking the suite. No crash backtracer (SWIFT_BACKTRACE=enable=no): a crash shows at once, as
/// the signal that ended it.
func calltrace(_ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil,
               stdin: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> CommandResult {
    try Workspace.requireProducts(file: file, line: line)
    return try Command.run(Workspace.cli.path, arguments, environment: ["SWIFT_BACKTRACE": "enable=no"].merging(environment) { $1 },
                           currentDirectory: directory, stdin: stdin, timeout: Command.calltraceTimeout)
}

extension Command {
    static let calltraceTimeout: TimeInterval = 300
}
