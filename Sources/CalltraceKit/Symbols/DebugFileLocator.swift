#if canImport(Glibc)
import Glibc
#endif

/// Finds the separate debug file of a stripped image, the way gdb does:
/// 1. by build-id: `<root>/.build-id/xx/rest.debug`, for each global debug directory;
/// 2. by `.gnu_debuglink` name, next to the real (symlink-resolved) file, in its `.debug/`
///    subdirectory, then under `<root>/<dir>/` for each global debug directory.
/// A candidate is accepted only if it is provably the right file: same build-id, or, when the
/// image has none, the CRC-32 recorded in `.gnu_debuglink`.
///
/// The global debug directories (gdb's `debug-file-directory`) are `/usr/lib/debug`, or those
/// `CALLTRACE_DEBUG_DIR` lists, separated by colons.
struct DebugFileLocator {
    /// The global debug directories, searched in order.
    let roots: [String]

    static let defaultRoot = "/usr/lib/debug"
    static let environmentVariable = "CALLTRACE_DEBUG_DIR"

    init(roots: [String]) {
        self.roots = roots
    }

    init(root: String) {
        self.init(roots: [root])
    }

    /// The directories of `CALLTRACE_DEBUG_DIR` when it is set and not empty, else `/usr/lib/debug`.
    init() {
        self.init(roots: Self.roots(fromEnvironment: getenv(Self.environmentVariable).map { String(cString: $0) }))
    }

    /// `value` split at colons, empty parts dropped; `/usr/lib/debug` when nothing is left.
    static func roots(fromEnvironment value: String?) -> [String] {
        let roots = (value ?? "").split(separator: ":").map(String.init)
        return roots.isEmpty ? [defaultRoot] : roots
    }

    /// The debug file for `image`, or nil if none is found (not an error: the image's own
    /// `.dynsym` still names its exported functions).
    func debugFile(for image: ElfImage) -> ElfImage? {
        for candidate in candidatePaths(for: image) {
            guard let debug = try? ElfImage(path: candidate), matches(debug, image) else { continue }
            return debug
        }
        return nil
    }

    /// Paths as bytes: the image's own path need not be UTF-8, and its debug file sits next to it.
    func candidatePaths(for image: ElfImage) -> [[UInt8]] {
        let roots = self.roots.map { Array($0.utf8) }
        let slash = UInt8(ascii: "/")
        var paths: [[UInt8]] = []
        if image.buildID.count >= 2 {
            let hex = TextFormat.hexDigits(image.buildID)
            let name = Array("/.build-id/\(hex.prefix(2))/\(hex.dropFirst(2)).debug".utf8)
            paths += roots.map { $0 + name }
        }
        if let linkName = image.debugLinkName, !linkName.contains("/") {
            let link = Array(linkName.utf8)
            let realPath = Self.realPath(image.pathBytes)
            let directory = realPath.lastIndex(of: slash).map { Array(realPath[..<$0]) } ?? [UInt8(ascii: ".")]
            let ownName = realPath.split(separator: slash).last.map(Array.init)
            // A debuglink naming the file itself would just reopen the stripped file.
            if link != ownName { paths.append(directory + [slash] + link) }
            let debugDirectory: [UInt8] = directory + Array("/.debug/".utf8)
            paths.append(debugDirectory + link)
            let relative = Array(directory.drop { $0 == slash })
            paths += roots.map { $0 + [slash] + relative + [slash] + link }
        }
        return paths
    }

    private func matches(_ debug: ElfImage, _ image: ElfImage) -> Bool {
        if !image.buildID.isEmpty { return debug.buildID == image.buildID }
        guard let expected = image.debugLinkCRC else { return false }
        return Self.crc32(ofFileAt: debug.pathBytes) == expected
    }

    private static func realPath(_ path: [UInt8]) -> [UInt8] {
        guard !path.contains(0) else { return path }
        let terminated = path.map { CChar(bitPattern: $0) } + [0]
        guard let resolved = terminated.withUnsafeBufferPointer({ $0.baseAddress.flatMap { realpath($0, nil) } })
        else { return path }
        defer { free(resolved) }
        return Array(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
    }

    /// The CRC-32 (IEEE, as in zlib) of a whole file, as `.gnu_debuglink` records it.
    /// Only used for images without a build-id, which are rare.
    private static func crc32(ofFileAt path: [UInt8]) -> UInt32? {
        let fd = ElfImage.open(path)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let table: [UInt32] = (0..<256).map { value in
            var crc = UInt32(value)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            return crc
        }
        var crc: UInt32 = 0xFFFF_FFFF
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            for byte in buffer[0..<count] {
                crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
            }
        }
        return ~crc
    }
}
