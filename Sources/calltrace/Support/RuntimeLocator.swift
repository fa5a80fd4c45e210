import CalltraceKit
import Glibc

/// Finds `libcalltrace_rt.so`, the runtime preloaded into recorded programs: `$CALLTRACE_RUNTIME`,
/// else next to the calltrace executable, else in `../lib` from it.
enum RuntimeLocator {
    static let libraryName = "libcalltrace_rt.so"

    static func find(environment: Environment) throws -> FilePath {
        if let bytes = environment["CALLTRACE_RUNTIME"], !bytes.isEmpty {
            let path = FilePath(bytes: bytes)
            guard path.withCString({ access($0, R_OK) }) == 0 else {
                throw CalltraceError("CALLTRACE_RUNTIME=\(path): no readable runtime library there")
            }
            return path.absolute  // LD_PRELOAD is resolved in the program's working directory
        }
        if let directory = executableDirectory() {
            // Next to the executable (a build directory), or in ../lib (installed: Scripts/install).
            for candidate in [directory.appending(libraryName), directory.appending("../lib/" + libraryName)]
            where candidate.withCString({ access($0, R_OK) }) == 0 {
                return candidate
            }
        }
        throw CalltraceError("cannot find the calltrace runtime \(libraryName): put it next to the calltrace "
                             + "executable or in ../lib from it, or set CALLTRACE_RUNTIME to its path")
    }

    private static func executableDirectory() -> FilePath? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let path = FilePath(bytes: buffer[0..<length].map { UInt8(bitPattern: $0) })
        guard path.bytes.contains(UInt8(ascii: "/")) else { return nil }
        return path.directory
    }
}
