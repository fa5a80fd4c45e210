import Glibc

/// Finds `libcalltrace_rt.so`, the runtime preloaded into recorded programs: `$CALLTRACE_RUNTIME`,
/// else next to the calltrace executable, else in `../lib` from it.
enum RuntimeLocator {
    static let libraryName = "libcalltrace_rt.so"

    static func find(environment: [String: String]) throws -> String {
        if let path = environment["CALLTRACE_RUNTIME"], !path.isEmpty {
            guard access(path, R_OK) == 0 else {
                throw CalltraceError("CALLTRACE_RUNTIME=\(path): no readable runtime library there")
            }
            return Paths.absolute(path)  // LD_PRELOAD is resolved in the program's working directory
        }
        if let directory = executableDirectory() {
            // Next to the executable (a build directory), or in ../lib (installed: Scripts/install).
            for candidate in [directory + "/" + libraryName, directory + "/../lib/" + libraryName]
            where access(candidate, R_OK) == 0 {
                return candidate
            }
        }
        throw CalltraceError("cannot find the calltrace runtime \(libraryName): put it next to the calltrace "
                             + "executable or in ../lib from it, or set CALLTRACE_RUNTIME to its path")
    }

    private static func executableDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let path = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }
}
