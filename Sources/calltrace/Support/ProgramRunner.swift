import Glibc

/// Runs a program like a shell does: stdin/stdout/stderr inherited, searched in PATH, and
/// SIGINT/SIGQUIT ignored here while it runs so Ctrl-C reaches the program, not calltrace.
struct ProgramRunner {
    var arguments: [String]
    var environment: [String: String]

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
        guard let program = arguments.first else { throw CalltraceError("no program to run") }
        signal(SIGINT, SIG_IGN)
        signal(SIGQUIT, SIG_IGN)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, program, nil, &attributes, argv + [nil], envp + [nil])
        switch status {
        case 0: return pid
        case ENOENT: throw CalltraceError("\(program): command not found", exitCode: 127)
        case EACCES: throw CalltraceError("\(program): permission denied", exitCode: 126)
        default: throw CalltraceError("cannot run \(program): \(String(cString: strerror(status)))", exitCode: 126)
        }
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
