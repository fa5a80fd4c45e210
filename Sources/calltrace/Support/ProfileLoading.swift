import ArgumentParser
import CalltraceKit
import Foundation

/// Traces into profiles for the views: symbolicated once, warnings on stderr.
enum ProfileLoading {
    /// Reads the trace at `path` straight into a profile (the calls are never held twice); the
    /// trace comes back for its warnings and header, without its calls.
    static func read(_ path: FilePath, options: TraceReader.Options = TraceReader.Options(),
                     lines: Bool) throws -> (trace: Trace, profile: Profile) {
        try reading(path) {
            try ProgressLine.reading(path, options) { options in
                try ProfileBuilder.read(path: path, options: options) { modules in
                    Symbolicator(modules: modules, lines: lines, warn: Diagnostics.warning)
                }
            }
        }
    }

    /// Reads the trace at `path` handing its calls to `consumer` as they come (none kept): the
    /// profile comes back without calls. Symbolication warnings go to `warn`.
    static func stream(_ path: FilePath, options: TraceReader.Options = TraceReader.Options(), lines: Bool,
                       into consumer: ProfileCallConsumer,
                       warn: @escaping (String) -> Void) throws -> (trace: Trace, profile: Profile) {
        try reading(path) {
            try ProgressLine.reading(path, options) { options in
                try ProfileBuilder.stream(path: path, options: options, into: consumer) { modules in
                    Symbolicator(modules: modules, lines: lines, warn: warn)
                }
            }
        }
    }

    /// `body`'s trace errors as one line naming the file.
    private static func reading<T>(_ path: FilePath, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as TraceError {
            switch error {
            case .cannotOpen, .isDirectory: throw CalltraceError("\(error)")
            default: throw CalltraceError("\(path): \(error)")
            }
        }
    }

    /// Every trace named: files as they are, directories by their `*.trace` files (sorted by name,
    /// not recursively). Each trace's warnings are reported with its path.
    static func load(_ paths: [FilePath], lines: Bool) throws -> [Profile] {
        try files(paths).map { try profile(ofFile: $0, lines: lines) }
    }

    /// Profiles of every trace named (as `load` finds them), one at a time: each can be dropped once
    /// `body` returns, so many runs need the memory of one.
    static func forEach(_ paths: [FilePath], lines: Bool, _ body: (Profile) throws -> Void) throws {
        for file in try files(paths) { try body(try profile(ofFile: file, lines: lines)) }
    }

    /// The statistics of every trace named, read one at a time.
    static func statistics(_ paths: [FilePath]) throws -> FunctionStatistics {
        var statistics = FunctionStatistics()
        try forEach(paths, lines: false) { statistics.add($0) }
        statistics.finish()
        return statistics
    }

    /// The trace files named: files as they are, directories by their `*.trace` files.
    static func files(_ paths: [FilePath]) throws -> [FilePath] {
        var files: [FilePath] = []
        for path in paths {
            if let names = directoryEntries(path) {
                let traces = names.filter { $0.hasSuffix(".trace") }.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
                if traces.isEmpty { throw CalltraceError("\(path): no *.trace files in this directory") }
                files += traces.map(path.appending)
            } else {
                files.append(path)
            }
        }
        return files
    }

    /// The names in the directory at `path` (not `.` and `..`); nil when it is not a directory.
    private static func directoryEntries(_ path: FilePath) -> [FilePath]? {
        guard let stream = path.withCString({ opendir($0) }) else { return nil }
        defer { closedir(stream) }
        var names: [FilePath] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { FilePath(bytes: $0) }
            if name.bytes != Array(".".utf8) && name.bytes != Array("..".utf8) { names.append(name) }
        }
        return names
    }

    private static func profile(ofFile file: FilePath, lines: Bool) throws -> Profile {
        let (trace, profile) = try read(file, lines: lines)
        trace.warnings.forEach { Diagnostics.warning("\(file): \($0)") }
        return profile
    }
}

/// A command's `--format` value against the views registered for it.
enum ViewSelection {
    static func check(_ format: String, command: ViewCommand) throws {
        _ = try view(format, command: command)
    }

    static func view(_ format: String, command: ViewCommand) throws -> any ProfileView.Type {
        guard let view = ViewRegistry.view(command, format: format) else {
            throw ValidationError("unknown --format '\(format)' (choose \(ViewRegistry.formats(of: command).joined(separator: ", ")))")
        }
        return view
    }
}
