import Glibc

/// The process environment as bytes (`NAME=value` entries, in `environ`'s order): values such as
/// paths need not be UTF-8, and `ProcessInfo.environment` would replace such bytes. What `record`
/// hands the program is this, with its own settings put in.
struct Environment {
    private(set) var entries: [[UInt8]]

    /// This process's environment.
    static func current() -> Environment {
        var entries: [[UInt8]] = []
        guard var cursor = Optional(environ) else { return Environment(entries: []) }
        while let entry = cursor.pointee {
            entries.append(Array(UnsafeRawBufferPointer(start: entry, count: strlen(entry))))
            cursor += 1
        }
        return Environment(entries: entries)
    }

    /// The value of `name`, as bytes; nil when it is not set.
    subscript(name: String) -> [UInt8]? {
        get {
            let prefix = Array(name.utf8) + [UInt8(ascii: "=")]
            return entries.first { $0.starts(with: prefix) }.map { Array($0.dropFirst(prefix.count)) }
        }
        set {
            let prefix = Array(name.utf8) + [UInt8(ascii: "=")]
            entries.removeAll { $0.starts(with: prefix) }
            if let newValue { entries.append(prefix + newValue) }
        }
    }

    /// The value of `name` as text (U+FFFD for bytes that are not UTF-8).
    func text(_ name: String) -> String? {
        self[name].map { String(decoding: $0, as: UTF8.self) }
    }
}
