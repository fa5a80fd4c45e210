import Foundation
import Glibc

/// Where `record` puts the program's trace: `-o`, else CALLTRACE_OUTPUT from the environment, else
/// `calltrace-<pid>.trace` in the current directory.
///
/// `-o FILE` replaces an existing file, as documented; the two defaults never replace a file (they
/// take `name-1.trace`, `name-2.trace`, ..., as the runtime does). Either way, an existing directory
/// means `calltrace-<pid>.trace` inside it, and `%p` stands for the program's pid.
struct TraceDestination {
    /// The path as given, `%p` not yet replaced.
    let template: String
    let replacesExistingFile: Bool

    static let defaultTemplate = "calltrace-%p.trace"

    /// Checks `-o` (or CALLTRACE_OUTPUT) before the program runs, so that a path that can never take
    /// the trace stops `record` before it starts anything.
    static func resolve(option: String?, environment: [String: String]) throws -> TraceDestination {
        if let option {
            guard RuntimeSetting.output.check(option) != nil else {
                throw CalltraceError("-o '\(option)' is not valid: expected \(RuntimeSetting.output.expected)")
            }
            if !option.contains("%p") {
                var info = stat()
                if lstat(option, &info) == 0 {
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
        if let value = environment[variable] {
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
    var directory: String { Paths.directory(of: template) }

    /// Where the trace of the program with `pid` goes, and whether an existing file there is replaced.
    func path(forProgram pid: pid_t) -> (path: String, replaces: Bool) {
        let path = template.replacingOccurrences(of: "%p", with: String(pid))
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            return (Paths.join(path, "calltrace-\(pid).trace"), false)
        }
        return (path, replacesExistingFile)
    }
}

/// Path strings, without Foundation's normalisation (a user's path is printed as they wrote it).
enum Paths {
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func name(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// `path` from the root: what a program that changes its directory can still use.
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return join(String(cString: cwd), path)
    }
}
