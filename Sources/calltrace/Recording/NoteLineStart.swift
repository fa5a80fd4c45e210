import Glibc

/// Whether `record`'s closing note must begin with a newline to start on a line of its own, after
/// whatever the program wrote to the same stderr.
///
/// When stderr is a regular file, its last byte says whether the output ended in a newline. For a
/// terminal or a pipe that cannot be known, so the note always begins with an empty line there (as
/// the shell's `time` does): a blank line too many, never a note glued to the program's last line.
enum NoteLineStart {
    static func needsNewline(stderr fd: Int32 = STDERR_FILENO) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }  // no stderr: nothing to separate
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            guard info.st_size > 0 else { return false }
            return lastByte(of: fd, size: info.st_size).map { $0 != UInt8(ascii: "\n") } ?? true
        case S_IFCHR:
            // /dev/null and the like: no one reads it. A terminal: unknowable, see above.
            return isatty(fd) == 1
        default:
            return true
        }
    }

    /// The file's last byte. `2> file` opens it write-only, so the byte is read through a second,
    /// read-only descriptor of the same file when the first cannot read.
    private static func lastByte(of fd: Int32, size: off_t) -> UInt8? {
        var byte: UInt8 = 0
        if pread(fd, &byte, 1, size - 1) == 1 { return byte }
        let reader = open("/proc/self/fd/\(fd)", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard reader >= 0 else { return nil }
        defer { close(reader) }
        var info = stat()
        guard fstat(reader, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 else { return nil }
        return pread(reader, &byte, 1, info.st_size - 1) == 1 ? byte : nil
    }
}
