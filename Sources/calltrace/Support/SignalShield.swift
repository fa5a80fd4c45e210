import Glibc

/// Keeps `record` alive while the program runs, whatever signals reach it.
///
/// A program may signal its whole process group (`kill(0, SIGTERM)`), and Ctrl-C signals the whole
/// foreground group: either would kill `record` too, and the program's exit status and the note
/// saying where its trace went would be lost. So `record` catches every signal that would end it,
/// with a handler that does nothing, while it waits.
///
/// Handlers, not SIG_IGN: exec resets caught signals to their default in the program, but keeps
/// ignored ones ignored, and the program must start with the dispositions it would have had
/// without calltrace. For the same reason a signal that calltrace itself was started with ignored
/// (`nohup`) is left as it is. Signals are not forwarded: a signal sent to `record` alone is
/// absorbed, and the program keeps running (signal the program or its process group instead).
/// The stop signals (SIGTSTP, SIGTTIN, SIGTTOU) keep their default, so job control still stops both.
struct SignalShield {
    private var saved: [(signal: Int32, action: sigaction)] = []

    /// Signals whose default action ends the process and that a process group is sent in practice:
    /// the classic ones and the real-time signals.
    private static var shielded: [Int32] {
        let classic = [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGVTALRM,
                       SIGPROF, SIGIO, SIGPWR, SIGSTKFLT, SIGXCPU, SIGXFSZ]
        let realtime = Array(__libc_current_sigrtmin()...__libc_current_sigrtmax())
        return classic + realtime
    }

    /// Installs the do-nothing handler on every shielded signal that calltrace does not ignore. (The
    /// Swift runtime has its own handler for SIGQUIT, to print a backtrace: replaced too.)
    static func raise() -> SignalShield {
        var shield = SignalShield()
        for signal in shielded {
            var current = sigaction()
            guard sigaction(signal, nil, &current) == 0, !isIgnored(current) else { continue }
            var absorb = sigaction()
            absorb.__sigaction_handler.sa_handler = { _ in }
            sigemptyset(&absorb.sa_mask)
            absorb.sa_flags = 0  // no SA_RESTART: waitpid returns EINTR and simply waits again
            if sigaction(signal, &absorb, nil) == 0 { shield.saved.append((signal, current)) }
        }
        return shield
    }

    private static func isIgnored(_ action: sigaction) -> Bool {
        action.sa_flags & SA_SIGINFO == 0
            && unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == 1  // SIG_IGN
    }

    /// Puts back the dispositions `raise()` replaced.
    func lower() {
        for var entry in saved { sigaction(entry.signal, &entry.action, nil) }
    }
}
