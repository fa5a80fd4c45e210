import CalltraceKit
import Glibc

/// `record`'s private directory, made next to the final trace: the runtime writes every process's
/// trace there (`CALLTRACE_OUTPUT=<dir>/calltrace-%p.trace`), so that afterwards `record` knows
/// exactly which files this run wrote, whatever pids the system reused and whatever files were
/// already where the trace goes.
struct RecordDirectory {
    /// From the root: the program may change its working directory.
    let path: FilePath

    static func create(in directory: FilePath) throws -> RecordDirectory {
        var template = directory.absolute.appending(".calltrace-record-XXXXXX").bytes.map { CChar(bitPattern: $0) } + [0]
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        guard let made else {
            throw CalltraceError("cannot create a directory for the trace in \(directory): \(String(cString: strerror(errno)))")
        }
        return RecordDirectory(path: FilePath(cString: made))
    }

    /// The runtime's output setting: its default name, in this directory.
    var outputTemplate: FilePath { path.appending(TraceDestination.defaultTemplate) }

    /// The runtime's name for a process's trace: `calltrace-PID.trace`, then `calltrace-PID-N.trace`
    /// for the images the process exec'ed after its first trace (the last is the latest image).
    struct TraceName: Comparable {
        let name: FilePath
        let pid: pid_t?
        let generation: Int

        init(_ path: FilePath) {
            self.name = path
            let name = path.description
            let stem = name.hasPrefix("calltrace-") && name.hasSuffix(".trace")
                ? name.dropFirst("calltrace-".count).dropLast(".trace".count) : ""
            let parts = stem.split(separator: "-", omittingEmptySubsequences: false)
            if (1...2).contains(parts.count), let pid = pid_t(parts[0]), pid > 0 {
                let generation = parts.count == 2 ? Int(parts[1]) : 0
                self.pid = generation == nil ? nil : pid
                self.generation = generation ?? 0
            } else {
                pid = nil
                generation = 0
            }
        }

        static func < (a: TraceName, b: TraceName) -> Bool {
            ((a.pid ?? 0), a.generation, a.name.description) < ((b.pid ?? 0), b.generation, b.name.description)
        }
    }

    /// The files in the directory, in pid order.
    func traces() -> [TraceName] {
        guard let stream = path.withCString({ opendir($0) }) else { return [] }
        defer { closedir(stream) }
        var names: [TraceName] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in FilePath(bytes: raw) }
            if name.bytes != Array(".".utf8) && name.bytes != Array("..".utf8) { names.append(TraceName(name)) }
        }
        return names.sorted()
    }

    /// Removes the directory if it is empty; false (and the directory stays) otherwise.
    func remove() -> Bool { path.withCString { rmdir($0) } == 0 }
}
