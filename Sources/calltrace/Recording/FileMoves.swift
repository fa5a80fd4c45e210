import Glibc

/// Moving a trace out of `record`'s private directory to its final name, on the same file system.
enum FileMoves {
    /// Renames `source` to `target`, replacing a file there (`-o FILE`). Returns nil or the failure.
    static func replacing(_ source: String, with target: String) -> String? {
        rename(source, target) == 0 ? nil : String(cString: strerror(errno))
    }

    /// Moves `source` to `target`, or to the first free `target-1.ext`, `target-2.ext`, ... (the
    /// runtime's rule): never over an existing file. Returns the path taken, or the failure.
    static func toFreeName(_ source: String, near target: String) -> Result<String, MoveFailure> {
        for n in 0..<1000 {
            let candidate = n == 0 ? target : alternative(target, n)
            // link() fails with EEXIST if the name is taken: no window in which another file
            // there could be replaced.
            if link(source, candidate) == 0 {
                unlink(source)
                return .success(candidate)
            }
            switch errno {
            case EEXIST: continue
            case EPERM, EOPNOTSUPP, EMLINK:
                // A file system without hard links: check, then rename (a race no worse than the
                // runtime's own O_EXCL fallback would have without the private directory).
                var info = stat()
                if lstat(candidate, &info) == 0 { continue }
                if rename(source, candidate) == 0 { return .success(candidate) }
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
    static func alternative(_ path: String, _ n: Int) -> String {
        let name = Paths.name(of: path)
        let stemEnd = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 } ?? name.endIndex
        let directory = path.count > name.count ? String(path.dropLast(name.count)) : ""
        return directory + name[..<stemEnd] + "-\(n)" + name[stemEnd...]
    }
}
