import CLibElf

/// The defined function symbols of one `ElfImage` (`.symtab` and `.dynsym`, STT_FUNC and
/// STT_GNU_IFUNC), or its data objects (STT_OBJECT with a size), sorted by address with one name
/// per address, searched by binary search.
///
/// Kept as parallel arrays: the binary search touches only `starts`.
struct ElfSymbolTable {
    /// ELF virtual addresses, ascending, no duplicates.
    private(set) var starts: [UInt64] = []
    /// Exclusive end of each symbol: `start + size`, or for a size-0 symbol (hand-written
    /// assembly) the end of its section, so it covers the gap up to the next symbol.
    private(set) var ends: [UInt64] = []
    private(set) var sized: [Bool] = []
    private(set) var names: [String] = []

    var count: Int { starts.count }

    /// Which symbols a table holds.
    enum Kind {
        /// Functions (STT_FUNC, STT_GNU_IFUNC), sized or not.
        case functions
        /// Variables (STT_OBJECT) with a size: a size-0 one holds no address. Thread-local ones
        /// (STT_TLS) are not among them: their values are offsets in a thread's block, not addresses.
        case objects
    }

    /// An empty table.
    init() {}

    init(image: ElfImage, kind: Kind = .functions) {
        var candidates: [Candidate] = []
        image.forEachSection { section, header, _ in
            guard header.sh_type == UInt32(SHT_SYMTAB) || header.sh_type == UInt32(SHT_DYNSYM) else { return }
            Self.read(section: section, header: header, of: image, kind: kind, into: &candidates)
        }
        // Sort by address, best name first, then keep the first of each address.
        candidates.sort { $0.start != $1.start ? $0.start < $1.start : $0.isPreferred(over: $1) }
        for candidate in candidates where candidate.start != starts.last {
            starts.append(candidate.start)
            ends.append(candidate.end)
            sized.append(candidate.size > 0)
            names.append(candidate.name)
        }
    }

    /// The name of the function holding `vaddr`: the symbol whose `[start, start + size)`
    /// holds it, or for a size-0 symbol the nearest preceding one in the same section.
    func name(containing vaddr: UInt64) -> String? {
        // Index of the last symbol starting at or before vaddr.
        var low = 0
        var high = starts.count
        while low < high {
            let mid = (low + high) / 2
            if starts[mid] <= vaddr { low = mid + 1 } else { high = mid }
        }
        let nearest = low - 1
        guard nearest >= 0 else { return nil }
        if vaddr < ends[nearest] { return names[nearest] }
        // A small symbol (a local label typed as a function) may sit inside a bigger function
        // that still holds the address; look back a few entries for it.
        var index = nearest - 1
        while index >= max(0, nearest - 8) {
            if sized[index] && vaddr < ends[index] { return names[index] }
            index -= 1
        }
        return nil
    }

    // MARK: - Reading

    private struct Candidate {
        var start: UInt64
        var size: UInt64
        var end: UInt64
        var binding: UInt8
        var name: String

        /// Among aliases at one address: sized over size-0, fewer leading underscores (the
        /// public name: `malloc` over `__libc_malloc`, `puts` over `_IO_puts`), global over
        /// weak over local, then the shorter name.
        func isPreferred(over other: Candidate) -> Bool {
            if (size > 0) != (other.size > 0) { return size > 0 }
            if underscores != other.underscores { return underscores < other.underscores }
            if rank != other.rank { return rank < other.rank }
            if name.utf8.count != other.name.utf8.count { return name.utf8.count < other.name.utf8.count }
            return name < other.name
        }

        private var rank: Int {
            switch Int32(binding) {
            case STB_GLOBAL: return 0
            case STB_WEAK: return 1
            default: return 2
            }
        }

        private var underscores: Int { name.utf8.prefix { $0 == UInt8(ascii: "_") }.count }
    }

    private static func read(section: OpaquePointer, header: GElf_Shdr, of image: ElfImage, kind: Kind,
                             into candidates: inout [Candidate]) {
        guard let data = elf_getdata(section, nil) else { return }
        let entrySize = gelf_fsize(image.elf, ELF_T_SYM, 1, UInt32(EV_CURRENT))
        guard entrySize > 0 else { return }
        let count = data.pointee.d_size / entrySize
        let stringsIndex = Int(header.sh_link)
        var sectionEnds: [UInt16: UInt64] = [:]
        // Index 0 is the reserved null symbol.
        for index in 1..<max(1, count) {
            var symbol = GElf_Sym()
            guard index <= Int(Int32.max), gelf_getsym(data, Int32(index), &symbol) != nil else { break }
            let type = Int32(symbol.st_info & 0xf)
            let wanted: Bool
            switch kind {
            case .functions: wanted = type == STT_FUNC || type == STT_GNU_IFUNC
            case .objects: wanted = type == STT_OBJECT && symbol.st_size > 0
            }
            guard wanted,
                  symbol.st_shndx != UInt16(SHN_UNDEF), symbol.st_value != 0,
                  let cName = elf_strptr(image.elf, stringsIndex, Int(symbol.st_name)) else { continue }
            let name = displayName(String(cString: cName))
            guard !name.isEmpty else { continue }
            var start = symbol.st_value
            if image.clearsThumbBit && kind == .functions { start &= ~1 }
            let end: UInt64
            if symbol.st_size > 0 {
                let (sum, overflow) = start.addingReportingOverflow(symbol.st_size)
                end = overflow ? .max : sum
            } else {
                end = sectionEnd(of: symbol.st_shndx, in: image, cache: &sectionEnds)
            }
            candidates.append(Candidate(start: start, size: symbol.st_size, end: max(end, start),
                                        binding: symbol.st_info >> 4, name: name))
        }
    }

    /// End address of section `index`; `.max` for reserved indexes (SHN_ABS...), which name no
    /// section to bound the symbol by.
    private static func sectionEnd(of index: UInt16, in image: ElfImage, cache: inout [UInt16: UInt64]) -> UInt64 {
        if let known = cache[index] { return known }
        var end = UInt64.max
        if index < UInt16(SHN_LORESERVE), let header = image.sectionHeader(at: Int(index)) {
            let (sum, overflow) = header.sh_addr.addingReportingOverflow(header.sh_size)
            end = overflow ? .max : sum
        }
        cache[index] = end
        return end
    }

    /// Symbol names in `.symtab` may carry a symbol version (`memcpy@GLIBC_2.2.5`,
    /// `foo@@VERS_1`); the version is not part of the function's name.
    private static func displayName(_ raw: String) -> String {
        guard let at = raw.utf8.firstIndex(of: UInt8(ascii: "@")), at != raw.utf8.startIndex else { return raw }
        return String(raw[..<at])
    }
}
