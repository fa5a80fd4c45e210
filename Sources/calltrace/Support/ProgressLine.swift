import CalltraceKit
import Glibc

/// A line on stderr saying how far reading a trace has come, shown only once reading has taken
/// more than a second, and only on a terminal: rewritten in place (`\r`) at most ten times a
/// second, and erased when reading ends or before any other message on stderr. Piped or
/// redirected, stderr gets nothing from it.
final class ProgressLine: @unchecked Sendable {
    private let label: String
    private let start = ProgressLine.now()
    private var lastDrawn: UInt64 = 0
    private var lastPercent = -1
    /// The line on screen now, if any (one at a time: the CLI reads one trace at a time).
    private nonisolated(unsafe) static var shown: ProgressLine?

    init(_ label: String) { self.label = label }

    /// Runs `body` (reading the trace at `path`) with `options` that draw a progress line; the
    /// line is erased when `body` returns.
    static func reading<T>(_ path: FilePath, _ options: TraceReader.Options,
                           _ body: (TraceReader.Options) throws -> T) rethrows -> T {
        guard Terminal.standardErrorIsTerminal else { return try body(options) }
        let line = ProgressLine("reading \(path)")
        var options = options
        options.progress = { line.update(done: $0, total: $1) }
        defer { clear() }
        return try body(options)
    }

    func update(done: Int, total: Int) {
        let now = Self.now()
        guard now - start >= 1_000_000_000, now - lastDrawn >= 100_000_000 else { return }
        let percent = total > 0 ? min(100, done * 100 / total) : 100
        guard percent != lastPercent else { return }
        lastDrawn = now
        lastPercent = percent
        var text = "calltrace: \(label): \(percent)% of \(total >> 20) MiB"
        // A line wider than the terminal would wrap, and `\r` could not take it back.
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 10, text.count >= Int(size.ws_col) {
            text = "..." + text.suffix(Int(size.ws_col) - 4)
        }
        fputs("\r" + text + "\u{1B}[K", stderr)
        Self.shown = self
    }

    /// Erases the line, if one is shown.
    static func clear() {
        guard shown != nil else { return }
        shown = nil
        fputs("\r\u{1B}[K", stderr)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
