import Glibc

/// Bytes put aside on disk, to be read back in another order: an output written in one order and
/// shown in another (`ReportJSONLStream`: calls as they end, shown thread by thread) keeps flat
/// memory. The file is made by `mkstemp` (mode 0600, a fresh name) in `$TMPDIR` or /tmp and
/// unlinked at once, so nothing is left behind, whatever happens to the process.
final class SpoolFile {
    private let descriptor: Int32
    private var size = 0
    /// The first write or read that failed (errno), 0 while none has.
    private(set) var failure: Int32 = 0

    /// Nil when no file can be made (the caller then keeps the bytes another way).
    init?() {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(directory)/calltrace-spool-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { name -> Int32 in
            guard let base = name.baseAddress else { return -1 }
            let descriptor = mkstemp(base)
            if descriptor >= 0 {
                unlink(base)
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            }
            return descriptor
        }
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends `bytes`; where they are in the file.
    func append(_ bytes: UnsafeRawBufferPointer) -> Range<Int> {
        let start = size
        var done = 0
        while done < bytes.count, failure == 0, let base = bytes.baseAddress {
            let written = pwrite(descriptor, base + done, bytes.count - done, off_t(start + done))
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { failure = written < 0 ? errno : EIO; break }
            done += written
        }
        size += bytes.count
        return start..<size
    }

    /// Reads back `range` through `buffer`, each piece handed to `sink`.
    func read(_ range: Range<Int>, buffer: UnsafeMutableRawBufferPointer, to sink: (UnsafeRawBufferPointer) -> Void) {
        var offset = range.lowerBound
        while offset < range.upperBound, failure == 0, let base = buffer.baseAddress {
            let got = pread(descriptor, base, min(buffer.count, range.upperBound - offset), off_t(offset))
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { failure = got < 0 ? errno : EIO; break }
            sink(UnsafeRawBufferPointer(start: base, count: got))
            offset += got
        }
    }

    /// Reads `range` whole into the start of `buffer` (which must hold it); false when it could not.
    func read(_ range: Range<Int>, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var done = 0
        while done < range.count, failure == 0, let base = buffer.baseAddress {
            let got = pread(descriptor, base + done, range.count - done, off_t(range.lowerBound + done))
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { failure = got < 0 ? errno : EIO; break }
            done += got
        }
        return failure == 0 && done == range.count
    }
}
