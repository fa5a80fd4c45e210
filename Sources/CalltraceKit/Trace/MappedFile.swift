import Glibc

/// A read-only, private memory mapping of a whole file. Reading ten million records through
/// a mapping costs no copy of the file; the pages stay in the kernel's page cache.
final class MappedFile {
    /// The file's bytes; empty (and unmapped) for an empty file.
    let bytes: UnsafeRawBufferPointer

    init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TraceError.cannotOpen(path: path, reason: MappedFile.errnoText()) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw TraceError.cannotOpen(path: path, reason: MappedFile.errnoText())
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: throw TraceError.isDirectory(path: path)
        case S_IFREG: break
        default: throw TraceError.cannotOpen(path: path, reason: "not a regular file")
        }
        let size = Int(info.st_size)
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            throw TraceError.cannotOpen(path: path, reason: MappedFile.errnoText())
        }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
