import CLibDW
import Glibc
import CLibElf

/// Source file and line for ELF virtual addresses, from an image's DWARF through libdw.
///
/// Best effort: an image without usable DWARF gives no table, and an address DWARF does not
/// cover gives nil. Never a crash.
final class LineTable {
    /// Keeps the `Elf *` that libdw reads from alive.
    private let image: ElfImage
    private let dwarf: OpaquePointer
    /// Compile-unit DIEs, collected on first need: the fallback when `.debug_aranges` is
    /// missing (clang does not emit it by default, and libdw before 0.191 needs it).
    private lazy var unitDies: [Dwarf_Die] = collectUnitDies()

    init?(image: ElfImage) {
        guard image.hasDwarf, let dwarf = dwarf_begin_elf(image.elf, DWARF_C_READ, nil) else { return nil }
        self.image = image
        self.dwarf = dwarf
    }

    deinit {
        dwarf_end(dwarf)
    }

    /// The source line for `vaddr`. At a function's entry, the line where the function is declared
    /// (its name: DW_AT_decl_file/DW_AT_decl_line), which is where a user looks for it; a signature
    /// spread over several lines has its entry row at the `){` line. Elsewhere, or for a function
    /// without that entry, the line table's row.
    func location(of vaddr: UInt64) -> (file: String, line: Int)? {
        var unit = Dwarf_Die()
        if dwarf_addrdie(dwarf, vaddr, &unit) != nil, let found = declaration(at: vaddr, in: &unit) ?? location(of: vaddr, in: &unit) {
            return found
        }
        for var candidate in unitDies where dwarf_haspc(&candidate, vaddr) == 1 {
            if let found = declaration(at: vaddr, in: &candidate) ?? location(of: vaddr, in: &candidate) { return found }
        }
        return nil
    }

    /// The declaration of the function whose entry is `vaddr`, in one compile unit: the innermost
    /// subprogram scope there, when its entry address is `vaddr` (libdw follows abstract origins
    /// and specifications to the declaration).
    private static let subprogramTag: Int32 = 0x2e  // DW_TAG_subprogram (dwarf.h)

    private func declaration(at vaddr: UInt64, in unit: inout Dwarf_Die) -> (file: String, line: Int)? {
        var scopes: UnsafeMutablePointer<Dwarf_Die>?
        let count = Int(dwarf_getscopes(&unit, vaddr, &scopes))
        guard count > 0, let scopes else { return nil }
        defer { free(scopes) }
        for index in 0..<count where dwarf_tag(&scopes[index]) == Self.subprogramTag {
            var entry: Dwarf_Addr = 0
            guard dwarf_entrypc(&scopes[index], &entry) == 0, entry == vaddr else { return nil }
            var line: Int32 = 0
            guard dwarf_decl_line(&scopes[index], &line) == 0, line > 0,
                  let file = dwarf_decl_file(&scopes[index]) else { return nil }
            return (String(cString: file), Int(line))
        }
        return nil
    }

    /// The line row for `vaddr` in one compile unit. libdw sorts rows by address; when
    /// several rows share the address (a function entry followed at once by inlined code),
    /// the first one that begins a statement is the function's own line, while
    /// `dwarf_getsrc_die` would give the last (an inlined header line). Otherwise the last row
    /// before the address holds it.
    private func location(of vaddr: UInt64, in unit: inout Dwarf_Die) -> (file: String, line: Int)? {
        var rows: OpaquePointer?
        var count = 0
        guard dwarf_getsrclines(&unit, &rows, &count) == 0, let rows, count > 0 else { return nil }
        func address(_ index: Int) -> UInt64? {
            var value: Dwarf_Addr = 0
            guard let row = dwarf_onesrcline(rows, index), dwarf_lineaddr(row, &value) == 0 else { return nil }
            return value
        }
        // First row at or after vaddr.
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            guard let value = address(mid) else { return nil }
            if value < vaddr { low = mid + 1 } else { high = mid }
        }
        var index = low
        // Rows that end a sequence sort first among equal addresses and hold no code.
        while index < count, address(index) == vaddr, isEndOfSequence(dwarf_onesrcline(rows, index)) { index += 1 }
        if index >= count || address(index) != vaddr {
            index = low - 1  // the last row before vaddr covers it, unless it ends a sequence
        } else {
            // Of the rows at the address, the first that begins a statement: gcc may put a row of
            // the previous function's last line, not a statement, at the next function's entry
            // (llex.c:291 before check_next1's own 191); addr2line skips it too.
            var statement = index
            while statement < count, address(statement) == vaddr, !beginsStatement(dwarf_onesrcline(rows, statement)) {
                statement += 1
            }
            if statement < count, address(statement) == vaddr { index = statement }
        }
        guard index >= 0, let row = dwarf_onesrcline(rows, index), !isEndOfSequence(row) else { return nil }
        var number: Int32 = 0
        guard dwarf_lineno(row, &number) == 0, number > 0,
              let source = dwarf_linesrc(row, nil, nil) else { return nil }
        return (String(cString: source), Int(number))
    }

    private func beginsStatement(_ row: OpaquePointer?) -> Bool {
        var flag = false
        return row.map { dwarf_linebeginstatement($0, &flag) == 0 && flag } ?? false
    }

    private func isEndOfSequence(_ row: OpaquePointer?) -> Bool {
        var flag = false
        return row.map { dwarf_lineendsequence($0, &flag) == 0 && flag } ?? true
    }

    private func collectUnitDies() -> [Dwarf_Die] {
        var dies: [Dwarf_Die] = []
        var unit: OpaquePointer?
        while true {
            var next: OpaquePointer?
            var die = Dwarf_Die()
            guard dwarf_get_units(dwarf, unit, &next, nil, nil, &die, nil) == 0, let next else { break }
            dies.append(die)
            unit = next
        }
        return dies
    }
}
