#if canImport(Glibc)
import Glibc
#endif

/// Finds the separate debug file of a stripped image, the way gdb does:
/// 1. by build-id: `<root>/.build-id/xx/rest.debug`;
/// 2. by `.gnu_debuglink` name, next to the real (symlink-resolved) file, in its `.debug/`
///    subdirectory, then under `<root>/<dir>/`.
/// A candidate is accepted only if it is provably the right file: same build-id, or, when the
/// image has none, the CRC-32 recorded in `.gnu_debuglink`.
struct DebugFileLocator {
    /// The global debug directory; tests point it elsewhere.
    let root: String

    init(root: String = "/usr/lib/debug") {
        self.root = root
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

    func candidatePaths(for image: ElfImage) -> [String] {
        var paths: [String] = []
        if image.buildID.count >= 2 {
            let hex = image.buildID.map { byte in
                let digits = String(byte, radix: 16)
                return digits.count == 1 ? "0" + digits : digits
            }
            paths.append("\(root)/.build-id/\(hex[0])/\(hex.dropFirst().joined()).debug")
        }
        if let link = image.debugLinkName, !link.contains("/") {
            let realPath = Self.realPath(image.path)
            let directory = realPath.lastIndex(of: "/").map { String(realPath[..<$0]) } ?? "."
            let ownName = realPath.split(separator: "/").last.map(String.init)
            // A debuglink naming the file itself would just reopen the stripped file.
            if link != ownName { paths.append("\(directory)/\(link)") }
            paths.append("\(directory)/.debug/\(link)")
            paths.append("\(root)/\(directory.drop { $0 == "/" })/\(link)")
        }
        return paths
    }

    private func matches(_ debug: ElfImage, _ image: ElfImage) -> Bool {
        if !image.buildID.isEmpty { return debug.buildID == image.buildID }
        guard let expected = image.debugLinkCRC else { return false }
        return Self.crc32(ofFileAt: debug.path) == expected
    }

    private static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The CRC-32 (IEEE, as in zlib) of a whole file, as `.gnu_debuglink` records it.
    /// Only used for images without a build-id, which are rare.
    private static func crc32(ofFileAt path: String) -> UInt32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
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
