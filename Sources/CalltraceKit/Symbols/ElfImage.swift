import CLibElf
#if canImport(Glibc)
import Glibc
#endif

/// An ELF executable, shared library or separate debug file on disk, opened read-only through
/// libelf (memory-mapped).
///
/// The initializer reads only headers and small sections (build-id, PT_LOAD segments,
/// `.gnu_debuglink`); the function symbol table is read on first use and kept. Every read goes
/// through libelf, which checks offsets against the file size, so a truncated or corrupt file
/// becomes an `ElfImageError` or an empty table, never a trap.
final class ElfImage {
    /// The path for messages (not UTF-8 bytes shown as U+FFFD).
    let path: String
    /// The path as opened.
    let pathBytes: [UInt8]
    /// The NT_GNU_BUILD_ID note, empty if the file has none.
    let buildID: [UInt8]
    /// PT_LOAD segments in file order.
    let segments: [ElfSegment]
    /// The `.gnu_debuglink` file name and CRC-32 of the separate debug file, if any.
    let debugLinkName: String?
    let debugLinkCRC: UInt32?
    /// Whether a `.symtab` is present (false for stripped files, which only have `.dynsym`).
    let hasSymtab: Bool
    /// Whether `.debug_info` is present with contents (not an SHT_NOBITS placeholder).
    let hasDwarf: Bool
    /// When the file was last modified, unix time.
    let modificationTime: Nanoseconds

    /// The libelf handle (`Elf *`), valid for the image's lifetime. Internal to this folder:
    /// `LineTable` hands it to libdw.
    let elf: OpaquePointer
    private let fd: Int32
    private let machine: UInt16

    /// Defined function symbols sorted by address, read from `.symtab` and `.dynsym` on first use.
    private(set) lazy var functionSymbols = ElfSymbolTable(image: self)

    /// Defined data objects (variables with a size) sorted by address, read on first use: only
    /// naming a data address (`Symbolicator.dataSymbol`) reads them.
    private(set) lazy var objectSymbols = ElfSymbolTable(image: self, kind: .objects)

    /// libelf must be told which ELF version we speak before the first `elf_begin`.
    private static let libelfReady: Bool = elf_version(UInt32(EV_CURRENT)) != UInt32(EV_NONE)

    convenience init(path: String) throws {
        try self.init(path: Array(path.utf8))
    }

    /// Opens the file at `pathBytes`: a path as the kernel knows it, bytes that need not be UTF-8.
    init(path pathBytes: [UInt8]) throws {
        let path = String(decoding: pathBytes, as: UTF8.self)
        self.path = path
        self.pathBytes = pathBytes
        guard Self.libelfReady else { throw ElfImageError.malformed(path: path, reason: "libelf unavailable") }
        let (fd, info) = try Self.openRegularFile(pathBytes, path: path)
        let (elf, header) = try Self.beginLoadableImage(fd: fd, fileSize: UInt64(info.st_size), path: path)
        self.elf = elf
        self.fd = fd
        self.modificationTime = Nanoseconds(Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec))
        self.machine = header.e_machine
        self.segments = Self.readLoadSegments(elf)
        let sections = SectionFacts(elf, bigEndian: header.e_ident.5 == UInt8(ELFDATA2MSB))
        self.buildID = sections.buildID.isEmpty ? Self.buildIDFromProgramHeaders(elf) : sections.buildID
        self.debugLinkName = sections.debugLink?.name
        self.debugLinkCRC = sections.debugLink?.crc
        self.hasSymtab = sections.hasSymtab
        self.hasDwarf = sections.hasDwarf
    }

    /// The open descriptor of a regular file and its status. Opened before it is checked, and
    /// checked through the descriptor: a path checked first could become a FIFO before the open.
    /// O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOCTTY: a terminal must not become ours.
    private static func openRegularFile(_ pathBytes: [UInt8], path: String) throws -> (Int32, stat) {
        let fd = Self.open(pathBytes)
        guard fd >= 0 else {
            throw errno == ENOENT || errno == ENOTDIR
                ? ElfImageError.fileNotFound(path: path) : .unreadable(path: path, errno: errno)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw ElfImageError.unreadable(path: path, errno: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw ElfImageError.notARegularFile(path: path)
        }
        return (fd, info)
    }

    /// libelf's handle on `fd` and the ELF header, once the file is a whole 32- or 64-bit
    /// executable or shared object; on a throw both the handle and `fd` are released.
    private static func beginLoadableImage(fd: Int32, fileSize: UInt64, path: String) throws -> (OpaquePointer, GElf_Ehdr) {
        guard let elf = elf_begin(fd, ELF_C_READ_MMAP, nil) else {
            close(fd)
            throw ElfImageError.notAnElfImage(path: path)
        }
        func fail(_ error: ElfImageError) -> ElfImageError {
            elf_end(elf)
            close(fd)
            return error
        }
        guard elf_kind(elf) == ELF_K_ELF else { throw fail(.notAnElfImage(path: path)) }
        let elfClass = gelf_getclass(elf)
        guard elfClass == ELFCLASS32 || elfClass == ELFCLASS64 else { throw fail(.wrongClass(path: path)) }
        var header = GElf_Ehdr()
        guard gelf_getehdr(elf, &header) != nil else {
            throw fail(.malformed(path: path, reason: lastError()))
        }
        guard header.e_type == ET_EXEC || header.e_type == ET_DYN else {
            throw fail(.notLoadable(path: path))
        }
        // libelf maps what it can of a truncated file and reports missing tables as empty;
        // a cut file must be an error, not an image without symbols.
        guard tableFits(offset: header.e_phoff, count: header.e_phnum, entrySize: header.e_phentsize, in: fileSize),
              tableFits(offset: header.e_shoff, count: header.e_shnum, entrySize: header.e_shentsize, in: fileSize)
        else { throw fail(.malformed(path: path, reason: "truncated")) }
        return (elf, header)
    }

    /// What the initializer learns from the section headers, in one pass over them.
    private struct SectionFacts {
        var buildID: [UInt8] = []
        var debugLink: (name: String, crc: UInt32?)?
        var hasSymtab = false
        var hasDwarf = false

        init(_ elf: OpaquePointer, bigEndian: Bool) {
            ElfImage.forEachSection(elf) { section, sectionHeader, name in
                switch sectionHeader.sh_type {
                case UInt32(SHT_NOTE) where buildID.isEmpty:
                    buildID = ElfImage.buildID(in: elf_getdata(section, nil))
                case UInt32(SHT_SYMTAB):
                    hasSymtab = true
                case UInt32(SHT_PROGBITS) where name == ".debug_info":
                    hasDwarf = sectionHeader.sh_size > 0
                case UInt32(SHT_PROGBITS) where name == ".gnu_debuglink":
                    debugLink = ElfImage.debugLink(in: elf_getdata(section, nil), bigEndian: bigEndian).map { ($0.0, $0.1) }
                default:
                    break
                }
            }
        }
    }

    deinit {
        elf_end(elf)
        close(fd)
    }

    /// Whether `vaddr` lies in one of the PT_LOAD segments.
    func isMapped(_ vaddr: UInt64) -> Bool { segments.contains { $0.contains(vaddr) } }

    /// ARM marks Thumb functions with bit 0 of the symbol value; the code starts one byte lower.
    var clearsThumbBit: Bool { machine == UInt16(EM_ARM) }

    /// Calls `body` with each section, its header and its name ("" if unnamed).
    func forEachSection(_ body: (OpaquePointer, GElf_Shdr, String) -> Void) {
        Self.forEachSection(elf, body)
    }

    /// The header of section `index`, nil for an out-of-range or reserved index.
    func sectionHeader(at index: Int) -> GElf_Shdr? {
        guard index > 0, let section = elf_getscn(elf, index) else { return nil }
        var header = GElf_Shdr()
        return gelf_getshdr(section, &header) != nil ? header : nil
    }

    /// `open(2)` of a path given as bytes; -1 (errno ENOENT) for a path with a NUL in it.
    static func open(_ path: [UInt8], flags: Int32 = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) -> Int32 {
        guard !path.contains(0) else {
            errno = ENOENT
            return -1
        }
        let terminated = path.map { CChar(bitPattern: $0) } + [0]
        return terminated.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return -1 }
            return Glibc.open(base, flags)
        }
    }

    static func lastError() -> String {
        elf_errmsg(-1).map { String(cString: $0) } ?? "unknown libelf error"
    }

    /// Whether a header table (`count` entries, 0 meaning none or an extended count, which
    /// libelf checks itself) lies within the file.
    private static func tableFits(offset: UInt64, count: UInt16, entrySize: UInt16, in fileSize: UInt64) -> Bool {
        guard count > 0 else { return true }
        let (end, overflow) = offset.addingReportingOverflow(UInt64(count) * UInt64(entrySize))
        return !overflow && end <= fileSize
    }

    // MARK: - Header readers (static: they run before `self` is complete)

    private static func forEachSection(_ elf: OpaquePointer, _ body: (OpaquePointer, GElf_Shdr, String) -> Void) {
        var namesIndex = 0
        let haveNames = elf_getshdrstrndx(elf, &namesIndex) == 0
        var section = elf_nextscn(elf, nil)
        while let current = section {
            var header = GElf_Shdr()
            if gelf_getshdr(current, &header) != nil {
                var name = ""
                if haveNames, let cName = elf_strptr(elf, namesIndex, Int(header.sh_name)) {
                    name = String(cString: cName)
                }
                body(current, header, name)
            }
            section = elf_nextscn(elf, current)
        }
    }

    private static func readLoadSegments(_ elf: OpaquePointer) -> [ElfSegment] {
        var count = 0
        guard elf_getphdrnum(elf, &count) == 0 else { return [] }
        var segments: [ElfSegment] = []
        for index in 0..<count {
            var header = GElf_Phdr()
            guard gelf_getphdr(elf, Int32(index), &header) != nil, header.p_type == PT_LOAD else { continue }
            segments.append(ElfSegment(vaddr: header.p_vaddr, memorySize: header.p_memsz,
                                       fileOffset: header.p_offset,
                                       isExecutable: header.p_flags & UInt32(PF_X) != 0))
        }
        return segments
    }

    /// Stripped debug files and some linkers keep the note only in a PT_NOTE segment.
    private static func buildIDFromProgramHeaders(_ elf: OpaquePointer) -> [UInt8] {
        var count = 0
        guard elf_getphdrnum(elf, &count) == 0 else { return [] }
        for index in 0..<count {
            var header = GElf_Phdr()
            guard gelf_getphdr(elf, Int32(index), &header) != nil, header.p_type == PT_NOTE,
                  header.p_filesz > 0, header.p_offset <= UInt64(Int64.max),
                  header.p_filesz <= UInt64(Int.max) else { continue }
            let type = header.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR
            let data = elf_getdata_rawchunk(elf, Int64(header.p_offset), Int(header.p_filesz), type)
            let found = buildID(in: data)
            if !found.isEmpty { return found }
        }
        return []
    }

    /// The NT_GNU_BUILD_ID descriptor in a note section or segment. `gelf_getnote` checks
    /// each note against the data size, so the descriptor bytes are in bounds.
    private static func buildID(in data: UnsafeMutablePointer<Elf_Data>?) -> [UInt8] {
        guard let data, let base = data.pointee.d_buf else { return [] }
        let size = data.pointee.d_size
        var offset = 0
        while offset < size {
            var note = GElf_Nhdr()
            var nameOffset = 0
            var descOffset = 0
            let next = gelf_getnote(data, offset, &note, &nameOffset, &descOffset)
            guard next > offset else { break }
            offset = next
            guard note.n_type == UInt32(NT_GNU_BUILD_ID), note.n_namesz == 4, note.n_descsz > 0,
                  nameOffset + 4 <= size, descOffset + Int(note.n_descsz) <= size else { continue }
            let name = UnsafeRawBufferPointer(start: base + nameOffset, count: 4)
            guard Array(name) == Array("GNU\0".utf8) else { continue }
            return Array(UnsafeRawBufferPointer(start: base + descOffset, count: Int(note.n_descsz)))
        }
        return []
    }

    /// `.gnu_debuglink`: a NUL-terminated file name, padding to 4 bytes, then a CRC-32
    /// in the file's byte order.
    private static func debugLink(in data: UnsafeMutablePointer<Elf_Data>?, bigEndian: Bool) -> (String, UInt32?)? {
        guard let data, let base = data.pointee.d_buf else { return nil }
        let bytes = UnsafeRawBufferPointer(start: base, count: data.pointee.d_size)
        guard let nul = bytes.firstIndex(of: 0), nul > 0 else { return nil }
        let name = String(decoding: bytes[0..<nul], as: UTF8.self)
        let crcOffset = (nul + 1 + 3) & ~3
        guard crcOffset + 4 <= bytes.count else { return (name, nil) }
        let crcBytes = bytes[crcOffset..<crcOffset + 4].map(UInt32.init)
        let crc = bigEndian
            ? crcBytes[0] << 24 | crcBytes[1] << 16 | crcBytes[2] << 8 | crcBytes[3]
            : crcBytes[3] << 24 | crcBytes[2] << 16 | crcBytes[1] << 8 | crcBytes[0]
        return (name, crc)
    }
}
