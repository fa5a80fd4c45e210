import Foundation

/// One file, in a private temporary directory, that a fuzz target rewrites with each input: for
/// readers that take a path rather than bytes. In /dev/shm when there is one, so the fuzzer does
/// not wear a disk. The directory is removed at exit (a crash leaves it in place, a few bytes).
public final class ScratchFile {
    public let path: String
    public let directory: String

    public init(name: String) {
        let parent = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        var template = Array("\(parent)/calltrace-fuzz-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        let created = made != nil
        let directory = made ?? parent
        self.directory = directory
        self.path = directory + "/" + name
        if created { ScratchFile.removeAtExit(directory) }
    }

    /// Replaces the file's contents with `bytes`.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { fatalError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count, let base = bytes.baseAddress {
            let written = Glibc.write(fd, base + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { fatalError("cannot write \(path): \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    private static var directoriesToRemove: [String] = []

    private static func removeAtExit(_ directory: String) {
        if directoriesToRemove.isEmpty {
            atexit { ScratchFile.directoriesToRemove.forEach { try? FileManager.default.removeItem(atPath: $0) } }
        }
        directoriesToRemove.append(directory)
    }
}
