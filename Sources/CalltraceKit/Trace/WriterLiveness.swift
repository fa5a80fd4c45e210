import Glibc

/// Whether the program that writes a trace is still running.
///
/// The runtime keeps the trace's header page mapped until the process exits, so the process is
/// running exactly when its `/proc/<pid>/maps` maps the trace file. Matching the file's device and
/// inode, not just the pid, rules out a pid the kernel has since given to another process.
/// (On overlayfs the mapping shows the device and inode of the file underneath, which `stat`
/// does not give: there the path, `realPath`, is matched instead.)
public enum WriterLiveness {
    public static func isRunning(pid: UInt64, mapping file: (device: UInt64, inode: UInt64),
                                 realPath: [UInt8]? = nil) -> Bool {
        guard pid > 0, pid <= UInt64(Int32.max), let maps = readMaps(pid: pid) else { return false }
        let device = deviceText(file.device)
        let inode = String(file.inode)
        // "start-end perms offset major:minor inode   path"
        for line in maps.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5 else { continue }
            if fields[3].elementsEqual(device.utf8) && fields[4].elementsEqual(inode.utf8) { return true }
            if let realPath, fields.count == 6, fields[5].drop(while: { $0 == UInt8(ascii: " ") }).elementsEqual(realPath) {
                return true
            }
        }
        return false
    }

    /// `major:minor` as /proc/<pid>/maps prints a device: at least two lower-case hex digits each.
    static func deviceText(_ device: UInt64) -> String {
        // glibc's encoding of dev_t (gnu_dev_major, gnu_dev_minor).
        let major = (device & 0x0000_0000_000f_ff00) >> 8 | (device & 0xffff_f000_0000_0000) >> 32
        let minor = (device & 0x0000_0000_0000_00ff) | (device & 0x0000_0fff_fff0_0000) >> 12
        func two(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return digits.count < 2 ? "0" + digits : digits
        }
        return two(major) + ":" + two(minor)
    }

    /// The maps file, or nil when there is no such process or it may not be read.
    private static func readMaps(pid: UInt64) -> [UInt8]? {
        let fd = open("/proc/\(pid)/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        // A process with a million mappings has a maps file of about 100 MB: enough.
        while contents.count < 256 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            contents += chunk[0..<count]
        }
        return contents
    }
}
