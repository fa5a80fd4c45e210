import CalltraceKit
import Glibc

/// Moving a trace out of `record`'s private directory to its final name, on the same file system.
enum FileMoves {
    /// Renames `source` to `target`, replacing a file there (`-o FILE`). Returns nil or the failure.
    static func replacing(_ source: FilePath, with target: FilePath) -> String? {
        source.withCString { source in target.withCString { rename(source, $0) } } == 0 ? nil : String(cString: strerror(errno))
    }

    /// Moves `source` to `target`, or to the first free `target-1.ext`, `target-2.ext`, ... (the
    /// runtime's rule): never over an existing file. Returns the path taken, or the failure.
    static func toFreeName(_ source: FilePath, near target: FilePath) -> Result<FilePath, MoveFailure> {
        for n in 0..<1000 {
            let candidate = n == 0 ? target : alternative(target, n)
            // link() fails with EEXIST if the name is taken: no window in which another file
            // there could be replaced.
            if source.withCString({ source in candidate.withCString { link(source, $0) } }) == 0 {
                _ = source.withCString { unlink($0) }
                return .success(candidate)
            }
            switch errno {
            case EEXIST: continue
            case EPERM, EOPNOTSUPP, EMLINK:
                // A file system without hard links: check, then rename (a race no worse than the
                // runtime's own O_EXCL fallback would have without the private directory).
                var info = stat()
                if candidate.withCString({ lstat($0, &info) }) == 0 { continue }
                if replacing(source, with: candidate) == nil { return .success(candidate) }
                return .failure(MoveFailure(reason: String(cString: strerror(errno))))
            default:
                return .failure(MoveFailure(reason: String(cString: strerror(errno))))
            }
        }
        return .failure(MoveFailure(reason: "the names up to \(alternative(target, 999)) are all taken"))
    }

    struct MoveFailure: Error {
        let reason: String
    }

    /// `name-N.ext`: N before the extension, as the runtime does.
    static func alternative(_ path: FilePath, _ n: Int) -> FilePath {
        let name = path.name.bytes
        let stemEnd = name.lastIndex(of: UInt8(ascii: ".")).flatMap { $0 == 0 ? nil : $0 } ?? name.endIndex
        let directory = path.bytes.dropLast(name.count)
        return FilePath(bytes: directory + name[..<stemEnd] + Array("-\(n)".utf8) + name[stemEnd...])
    }
}
