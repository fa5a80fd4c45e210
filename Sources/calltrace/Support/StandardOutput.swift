import CalltraceKit
import Glibc

/// Buffered standard output for views that write millions of lines.
struct StandardOutput: TextOutputStream {
    private var buffer: [UInt8] = []
    private let limit = 1 << 16

    init() { buffer.reserveCapacity(limit + 4096) }

    mutating func write(_ string: String) {
        buffer.append(contentsOf: string.utf8)
        if buffer.count >= limit { flush() }
    }

    mutating func flush() {
        buffer.withUnsafeBytes { StandardOutput.writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// What `body` writes into a `ByteOutput`, onto standard output (also what it wrote before an
    /// error it throws).
    static func write(_ body: (ByteOutput) throws -> Void) rethrows {
        let output = ByteOutput(sink: writeAll)
        defer { output.flush() }
        try body(output)
    }

    /// Writes all of `bytes` to standard output (a closed pipe ends the writing quietly).
    static func writeAll(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count, let base = bytes.baseAddress {
            let written = Glibc.write(STDOUT_FILENO, base + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { break }
            offset += written
        }
    }
}
