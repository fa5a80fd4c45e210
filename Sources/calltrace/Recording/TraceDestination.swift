import Glibc
import CalltraceKit

/// Where `record` puts the program's trace: `-o`, else CALLTRACE_OUTPUT from the environment, else
/// `calltrace-<pid>.trace` in the current directory.
///
/// `-o FILE` replaces an existing file, as documented; the two defaults never replace a file (they
/// take `name-1.trace`, `name-2.trace`, ..., as the runtime does). Either way, an existing directory
/// means `calltrace-<pid>.trace` inside it, and `%p` stands for the program's pid. Paths are bytes
/// (`FilePath`): a directory whose name is not UTF-8 is as good as any.
struct TraceDestination {
    /// The path as given, `%p` not yet replaced.
    let template: FilePath
    let replacesExistingFile: Bool

    static let defaultTemplate = FilePath("calltrace-%p.trace")

    /// Checks `-o` (or CALLTRACE_OUTPUT) before the program runs, so that a path that can never take
    /// the trace stops `record` before it starts anything.
    static func resolve(option: FilePath?, environment: Environment) throws -> TraceDestination {
        if let option {
            guard RuntimeSetting.output.check(option) != nil else {
                throw CalltraceError("-o '\(option)' is not valid: expected \(RuntimeSetting.output.expected)")
            }
            if !option.contains("%p") {
                var info = stat()
                if option.withCString({ lstat($0, &info) }) == 0 {
                    let type = info.st_mode & S_IFMT
                    // Never through a link, as the runtime: name the file or directory itself.
                    guard type != S_IFLNK else {
                        throw CalltraceError("-o \(option) is a symbolic link; calltrace does not write through links: "
                                             + "name the file or directory it points to")
                    }
                    guard type == S_IFREG || type == S_IFDIR else {
                        throw CalltraceError("-o \(option) exists and is not a regular file or a directory")
                    }
                }
            }
            return TraceDestination(template: option, replacesExistingFile: true)
        }
        let variable = RuntimeSetting.output.variable
        if let value = environment[variable].map(FilePath.init(bytes:)) {
            if RuntimeSetting.output.check(value) != nil {
                return TraceDestination(template: value, replacesExistingFile: false)
            }
            // record hands the runtime its own CALLTRACE_OUTPUT, so the runtime never sees this one:
            // warn here, in the runtime's words.
            Diagnostics.warning("\(variable)=\(value) is not valid (expected \(RuntimeSetting.output.expected)); "
                                + "using the default, \(RuntimeSetting.output.defaultValue)")
        }
        return TraceDestination(template: defaultTemplate, replacesExistingFile: false)
    }

    /// The directory the trace goes to, where `record` makes its private directory (the same file
    /// system, so the traces are moved out by renaming).
    var directory: FilePath { template.directory }

    /// Where the trace of the program with `pid` goes, and whether an existing file there is replaced.
    func path(forProgram pid: pid_t) -> (path: FilePath, replaces: Bool) {
        let path = template.replacing("%p", with: String(pid))
        var info = stat()
        if path.withCString({ lstat($0, &info) }) == 0, info.st_mode & S_IFMT == S_IFDIR {
            return (path.appending("calltrace-\(pid).trace"), false)
        }
        return (path, replacesExistingFile)
    }
}
