import Glibc

/// A file's path as the kernel takes it: bytes, not text.
///
/// Linux paths need not be UTF-8 (a directory named in Latin-1, a `\xff` in a name). A `String`
/// made from such a path replaces the bytes it cannot decode with U+FFFD, and names another file;
/// so paths stay bytes from the command line to the system calls, and become text only when they
/// are shown (`description`, where undecodable bytes read as U+FFFD).
public struct FilePath: Hashable, Sendable, CustomStringConvertible {
    /// The path without a terminating NUL (it stops at the first NUL it is given).
    public let bytes: [UInt8]

    public init(bytes: some Sequence<UInt8>) {
        self.bytes = Array(bytes.prefix { $0 != 0 })
    }

    public init(_ string: String) {
        self.init(bytes: string.utf8)
    }

    /// A NUL-terminated path from the system (`getcwd`, `mkdtemp`, `readdir`).
    public init(cString: UnsafePointer<CChar>) {
        self.init(bytes: UnsafeRawBufferPointer(start: cString, count: strlen(cString)))
    }

    /// The path for people: UTF-8, with U+FFFD for bytes that are not.
    public var description: String { String(decoding: bytes, as: UTF8.self) }

    public var isEmpty: Bool { bytes.isEmpty }

    /// Calls `body` with the path NUL-terminated, for a system call.
    public func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        let cString = bytes.map { CChar(bitPattern: $0) } + [0]
        return try body(cString)
    }

    private static let slash = UInt8(ascii: "/")

    /// The directory part: `.` for a bare name, `/` for a name in the root.
    public var directory: FilePath {
        guard let slash = bytes.lastIndex(of: Self.slash) else { return FilePath(".") }
        return slash == 0 ? FilePath("/") : FilePath(bytes: bytes[..<slash])
    }

    /// The last component (the whole path when it has no `/`).
    public var name: FilePath {
        guard let slash = bytes.lastIndex(of: Self.slash) else { return self }
        return FilePath(bytes: bytes[(slash + 1)...])
    }

    /// `name` inside this directory.
    public func appending(_ name: FilePath) -> FilePath {
        FilePath(bytes: bytes.last == Self.slash ? bytes + name.bytes : bytes + [Self.slash] + name.bytes)
    }

    public func appending(_ name: String) -> FilePath { appending(FilePath(name)) }

    /// The path from the root, for a program that changes its working directory; as it is when
    /// the working directory cannot be read.
    public var absolute: FilePath {
        if bytes.first == Self.slash { return self }
        guard let cwd = getcwd(nil, 0) else { return self }
        defer { free(cwd) }
        return FilePath(cString: cwd).appending(self)
    }

    public func hasSuffix(_ suffix: String) -> Bool {
        let suffix = Array(suffix.utf8)
        return bytes.count >= suffix.count && bytes.suffix(suffix.count).elementsEqual(suffix)
    }

    public func contains(_ text: String) -> Bool { range(of: Array(text.utf8), from: 0) != nil }

    /// Every `target` replaced with `replacement`.
    public func replacing(_ target: String, with replacement: String) -> FilePath {
        let target = Array(target.utf8)
        guard !target.isEmpty else { return self }
        var result: [UInt8] = []
        var start = 0
        while let found = range(of: target, from: start) {
            result += bytes[start..<found.lowerBound] + replacement.utf8
            start = found.upperBound
        }
        return FilePath(bytes: result + bytes[start...])
    }

    private func range(of target: [UInt8], from start: Int) -> Range<Int>? {
        guard !target.isEmpty, bytes.count >= target.count, start <= bytes.count - target.count else { return nil }
        for index in start...(bytes.count - target.count) where bytes[index..<(index + target.count)].elementsEqual(target) {
            return index..<(index + target.count)
        }
        return nil
    }

    public static func + (path: FilePath, suffix: String) -> FilePath { FilePath(bytes: path.bytes + suffix.utf8) }
}
