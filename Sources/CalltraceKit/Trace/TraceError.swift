/// Why a file could not be read as a trace. Each case reads as one line for the user.
public enum TraceError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case isDirectory(path: String)
    case emptyFile
    case notATrace
    case truncatedHeader(size: Int)
    case newerVersion(Int)
    case badHeader(String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): return "cannot open \(path): \(reason)"
        case let .isDirectory(path): return "\(path) is a directory, not a trace file"
        case .emptyFile: return "the file is empty, not a calltrace trace"
        case .notATrace: return "not a calltrace trace"
        case let .truncatedHeader(size):
            return "the trace is truncated: \(size) bytes, shorter than its 4096-byte header"
        case let .newerVersion(version):
            return "written by a newer calltrace (format \(version)); this reader understands \(TraceHeader.supportedVersion)"
        case let .badHeader(reason): return "damaged trace header: \(reason)"
        }
    }
}
