import CalltraceKit
import Glibc

/// A view rendered into the file named with `-o` (created or replaced) or onto standard output,
/// as the bytes come. A write that fails on the file is one error; on standard output (a closed
/// pipe) the writing ends quietly. A binary format is not written to a terminal.
enum OutputFile {
    /// `standardOutput: false` writes nothing to standard output when no file is named (the bytes
    /// go only to `also`: `export --endpoint`); `also` sees every byte rendered.
    static func render(_ view: any ProfileView.Type, _ input: ViewInput, options: ViewOptions = ViewOptions(),
                       to path: FilePath?, standardOutput: Bool = true,
                       also: ((UnsafeRawBufferPointer) -> Void)? = nil) throws {
        try write(format: view.format, isBinary: view.isBinary, to: path, standardOutput: standardOutput, also: also) {
            view.render(input, options: options, to: $0)
        }
    }

    /// What `body` writes, as `render` writes a view's bytes (a view made another way: while the
    /// trace was read, `ViewRunner`). An error `body` throws ends the writing.
    static func write(format: String, isBinary: Bool, to path: FilePath?, standardOutput: Bool = true,
                      also: ((UnsafeRawBufferPointer) -> Void)? = nil, _ body: (ByteOutput) throws -> Void) throws {
        var descriptor: Int32 = standardOutput ? STDOUT_FILENO : -1
        if path == nil, descriptor == STDOUT_FILENO, isBinary, isatty(STDOUT_FILENO) == 1 {
            throw CalltraceError("--format \(format) is binary: name a file with -o, or redirect standard output")
        }
        if let path {
            descriptor = path.withCString { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
            if descriptor < 0 { throw CalltraceError("\(path): cannot write: \(String(cString: strerror(errno)))") }
        }
        defer { if descriptor >= 0 && descriptor != STDOUT_FILENO { close(descriptor) } }
        var failed: Int32 = 0
        let bytes = ByteOutput { chunk in
            var offset = 0
            while descriptor >= 0, offset < chunk.count, failed == 0, let base = chunk.baseAddress {
                let written = Glibc.write(descriptor, base + offset, chunk.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { failed = written < 0 ? errno : EIO; break }
                offset += written
            }
            also?(chunk)
        }
        // What was written before an error still goes out, while the descriptor is open.
        var thrown: Error?
        do {
            try body(bytes)
        } catch {
            thrown = error
        }
        bytes.flush()
        if failed != 0, let path {
            throw CalltraceError("\(path): cannot write: \(String(cString: strerror(failed)))")
        }
        if let thrown { throw thrown }
    }

    /// Writes `bytes` to the file at `path`, created or replaced.
    static func write(_ bytes: [UInt8], to path: FilePath) throws {
        let descriptor = path.withCString { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        if descriptor < 0 { throw CalltraceError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 {
                throw CalltraceError("cannot write \(path): \(String(cString: strerror(written < 0 ? errno : EIO)))")
            }
            offset += written
        }
    }
}
