import CLibElf

/// The compiler that built an ELF file, from its `.comment` section: each compiler leaves its
/// version string there ("GCC: (Debian 12.2.0-14) 12.2.0", "clang version 21.0.0"). A program
/// clang built also holds gcc's string, from the C runtime's start files gcc compiled, so any
/// clang string means clang. Adaptive muting leaves more behind in gcc's code than in clang's
/// (docs/design.md, "The cost that muting leaves behind"), which `report` and `info` say.
public enum BuildCompiler: Sendable, Equatable {
    case gcc, clang, unknown

    /// Of the file at `path` (and of the file there now, which may not be the one traced).
    public static func of(pathBytes path: [UInt8]) -> BuildCompiler {
        guard let image = try? ElfImage(path: path) else { return .unknown }
        var comment: [UInt8] = []
        image.forEachSection { section, header, name in
            guard name == ".comment", header.sh_type == UInt32(SHT_PROGBITS), header.sh_size < 1 << 20,
                  let data = elf_getdata(section, nil), let bytes = data.pointee.d_buf else { return }
            comment += UnsafeRawBufferPointer(start: bytes, count: Int(data.pointee.d_size))
        }
        if contains(comment, "clang version") { return .clang }
        return contains(comment, "GCC: ") ? .gcc : .unknown
    }

    /// How far off a gcc hooks build's costs were measured to be (docs/performance.md, "Issue 25"):
    /// `MutedCodeNote` quotes it (`report`, `info`) where gcc built a muted function with hooks.
    public static let gccHooksMeasured = "traced at 10 ms, gcc hooks builds ran at 1.6-3.1 x their uninstrumented time "
        + "on the bench's real programs, sled builds at 0.9-1.6 x: docs/performance.md"

    /// Of the modules that hold the functions the runtime muted with hooks (`nil` when it muted
    /// none): gcc when any of them is gcc's. Functions built with sleds leave nothing behind.
    public static func ofMuted(in trace: Trace) -> BuildCompiler? {
        let hooked = trace.muted.filter { !$0.sleds }
        guard !hooked.isEmpty else { return nil }
        var seen: [String: BuildCompiler] = [:]
        var found = BuildCompiler.unknown
        for muted in hooked {
            guard let module = trace.modules.first(where: { $0.contains(muted.function) }) else { continue }
            let compiler = seen[module.path] ?? of(pathBytes: module.pathBytes)
            seen[module.path] = compiler
            if compiler == .gcc { return .gcc }
            if compiler == .clang { found = .clang }
        }
        return found
    }

    private static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in
            haystack[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}
