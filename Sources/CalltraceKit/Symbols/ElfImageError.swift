/// Why an ELF file could not be used for symbolication. Garbage input becomes one of these
/// values, never a trap.
enum ElfImageError: Error, Equatable, CustomStringConvertible {
    /// Nothing at the path (a deleted library, a trace from another machine).
    case fileNotFound(path: String)
    /// A directory, device, FIFO...: something we must not even open.
    case notARegularFile(path: String)
    /// `open` failed for another reason (permissions...); `errno` says why.
    case unreadable(path: String, errno: Int32)
    /// Not an ELF file at all, or an archive.
    case notAnElfImage(path: String)
    /// `EI_CLASS` is neither ELFCLASS32 nor ELFCLASS64.
    case wrongClass(path: String)
    /// An ELF file that is not an executable or shared object (a `.o`, a core dump).
    case notLoadable(path: String)
    /// libelf rejected the headers (a truncated or corrupt file).
    case malformed(path: String, reason: String)
    /// The file exists but is not the one the trace recorded.
    case buildIDMismatch(path: String, expected: [UInt8], found: [UInt8])
    /// The trace recorded no build-id for the module, and its file was modified after the
    /// module was loaded: it cannot be the file that was mapped.
    case modifiedSinceRecording(path: String)

    var description: String {
        switch self {
        case .fileNotFound(let path): return "\(path) does not exist"
        case .notARegularFile(let path): return "\(path) is not a regular file"
        case .unreadable(let path, let errno): return "\(path) cannot be read (errno \(errno))"
        case .notAnElfImage(let path): return "\(path) is not an ELF file"
        case .wrongClass(let path): return "\(path) has an unknown ELF class"
        case .notLoadable(let path): return "\(path) is not an executable or shared library"
        case .malformed(let path, let reason): return "\(path) is malformed (\(reason))"
        case .buildIDMismatch(let path, _, _):
            return "\(path) changed since the trace was recorded (build-id differs)"
        case .modifiedSinceRecording(let path):
            return "\(path) changed since the trace was recorded (modified after it was loaded)"
        }
    }
}
