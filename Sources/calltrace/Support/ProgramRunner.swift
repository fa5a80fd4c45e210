import Foundation
import Glibc

/// Runs a program like a shell does: stdin/stdout/stderr, the process group and the signal
/// dispositions inherited, searched in PATH. (SignalShield keeps calltrace alive meanwhile.) Its
/// arguments and environment are bytes, handed on as calltrace got them.
struct ProgramRunner {
    var arguments: [[UInt8]]
    var environment: Environment

    /// How the program ended.
    enum Termination {
        case exited(Int32)
        case signaled(Int32)

        /// The status a shell reports: the exit code, or 128 + the signal.
        var shellStatus: Int32 {
            switch self {
            case let .exited(code): return code
            case let .signaled(signal): return 128 + signal
            }
        }
    }

    /// Starts the program and returns its pid.
    func spawn() throws -> pid_t {
        guard let programBytes = arguments.first else { throw CalltraceError("no program to run") }
        let program = String(decoding: programBytes, as: UTF8.self)
        // Signals calltrace catches are reset to their default by exec. But glibc's posix_spawn sets
        // its two internal signals (32 and 33, below SIGRTMIN) to SIG_IGN in the new process, and
        // exec keeps that: ask for their default instead, unless calltrace itself was started with
        // them ignored (then the program inherits that, as it would without calltrace).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // (glibc's sigaction and sigaddset refuse these two signals: /proc tells whether they are
        // ignored here, and the set's bits are set directly.)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        let ignored = ignoredSignals()
        withUnsafeMutableBytes(of: &defaults) { bits in
            for signal in 32...33 where ignored & (1 << (signal - 1)) == 0 {
                bits[(signal - 1) / 8] |= UInt8(1 << ((signal - 1) % 8))
            }
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map(Self.cString)
        let envp = environment.entries.map(Self.cString)
        defer { (argv + envp).forEach { free($0) } }
        guard let file = argv[0] else { throw CalltraceError("cannot run \(program): out of memory", exitCode: 126) }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, file, nil, &attributes, argv + [nil], envp + [nil])
        switch status {
        case 0: return pid
        case ENOENT: throw CalltraceError("\(program): command not found", exitCode: 127)
        case EACCES: throw CalltraceError("\(program): permission denied", exitCode: 126)
        default: throw CalltraceError("cannot run \(program): \(String(cString: strerror(status)))", exitCode: 126)
        }
    }

    /// A malloc'ed NUL-terminated copy of `bytes`, for argv and envp.
    private static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
        (bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { buffer in
            buffer.baseAddress.flatMap { strdup($0) }
        }
    }

    /// The signals this process ignores, bit N-1 for signal N (the SigIgn line of /proc/self/status).
    private func ignoredSignals() -> UInt64 {
        guard let file = fopen("/proc/self/status", "r") else { return 0 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("SigIgn:") {
                return UInt64(text.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespacesAndNewlines),
                              radix: 16) ?? 0
            }
        }
        return 0
    }

    static func wait(for pid: pid_t) throws -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw CalltraceError("waiting for the program: \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED / WTERMSIG are macros Swift cannot import.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }
}
