import Glibc

/// A trace file open for reading with `pread`.
///
/// Not a mapping: a trace is often read while the runtime still writes it, or after a full disk
/// left holes in it, or while someone cuts it; a mapped page past a cut raises SIGBUS, a `pread`
/// just reads short. Holes are found with `SEEK_DATA`, so a sparse file of any size reads in
/// the time its data takes.
final class TraceFile: TraceSource {
    let path: FilePath
    let size: Int
    /// The file's identity, to find it in another process's mappings.
    let device: UInt64
    let inode: UInt64
    private let fd: Int32

    init(path: FilePath) throws {
        // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
        guard fd >= 0 else { throw TraceError.cannotOpen(path: "\(path)", reason: TraceFile.errnoText()) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = TraceFile.errnoText()
            close(fd)
            throw TraceError.cannotOpen(path: "\(path)", reason: reason)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR:
            close(fd)
            throw TraceError.isDirectory(path: "\(path)")
        default:
            close(fd)
            throw TraceError.cannotOpen(path: "\(path)", reason: "not a regular file")
        }
        self.path = path
        self.fd = fd
        self.size = Int(info.st_size)
        self.device = UInt64(info.st_dev)
        self.inode = UInt64(info.st_ino)
    }

    deinit { close(fd) }

    /// The absolute path with every link resolved, as /proc/<pid>/maps shows it; nil if unknown.
    var realPath: [UInt8]? {
        guard let resolved = path.withCString({ realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return Array(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let count = pread(fd, base + done, buffer.count - done, off_t(offset + done))
            if count < 0 && errno == EINTR { continue }
            // An I/O error reads as the end of the data: what came before is still good.
            guard count > 0 else { break }
            done += count
        }
        return done
    }

    func dataOffset(from offset: Int) -> Int? {
        let found = lseek(fd, off_t(offset), TraceFile.seekData)
        if found >= 0 { return Int(found) }
        // ENXIO: nothing but a hole from here on. Any other error (a file system without
        // SEEK_DATA): no holes to skip.
        return errno == ENXIO ? nil : offset
    }

    func holeOffset(from offset: Int) -> Int {
        // The answer of the last search holds for any offset between where it began and the hole
        // it found, as long as the file kept its size: `SEEK_HOLE` walks the page cache from the
        // offset to the hole (the end of a file without holes), so asking afresh for every block
        // made reading quadratic in the file's size (a tenth of an 88 MB trace's reading time).
        var info = stat()
        guard fstat(fd, &info) == 0 else { return Int.max }
        let size = Int(info.st_size)
        if let last = lastHoleSearch, last.size == size, last.from <= offset, offset < last.found {
            return last.hole
        }
        let found = lseek(fd, off_t(offset), TraceFile.seekHole)
        guard found >= 0 else { return Int.max }
        // The end of the file counts as a hole: only one before the end (as it is now: the file
        // may have been cut since it was opened) is one.
        let hole = Int(found) < size ? Int(found) : Int.max
        lastHoleSearch = (from: offset, found: Int(found), size: size, hole: hole)
        return hole
    }

    /// The last `holeOffset` search: where it began, where `SEEK_HOLE` found a hole (or the end),
    /// the file's size then, and the answer given.
    private var lastHoleSearch: (from: Int, found: Int, size: Int, hole: Int)?

    /// Linux's `SEEK_DATA` and `SEEK_HOLE`, which Glibc's Swift module leaves out (they are behind
    /// `_GNU_SOURCE`).
    private static let seekData: Int32 = 3
    private static let seekHole: Int32 = 4

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
