/// The files behind one trace module: its ELF file and, when that file is stripped, the
/// separate debug file. Decides which of the two supplies names and which supplies lines.
final class ModuleImage {
    let image: ElfImage
    private let locator: DebugFileLocator
    private var lineTableLoaded = false
    private var lineTableValue: LineTable?

    init(image: ElfImage, locator: DebugFileLocator) {
        self.image = image
        self.locator = locator
    }

    /// The separate debug file, looked for only when the file itself lacks `.symtab` or DWARF.
    private(set) lazy var debugFile: ElfImage? = locator.debugFile(for: image)

    /// `.symtab` of the file if it has one, else the debug file's, else the file's `.dynsym`
    /// (exported functions only).
    var functionSymbols: ElfSymbolTable {
        if !image.hasSymtab, let debugFile, debugFile.hasSymtab { return debugFile.functionSymbols }
        return image.functionSymbols
    }

    /// The data objects of the same table as `functionSymbols`.
    var objectSymbols: ElfSymbolTable {
        if !image.hasSymtab, let debugFile, debugFile.hasSymtab { return debugFile.objectSymbols }
        return image.objectSymbols
    }

    /// DWARF lines from the file itself or its debug file, opened on first use.
    var lineTable: LineTable? {
        if !lineTableLoaded {
            lineTableLoaded = true
            lineTableValue = LineTable(image: image) ?? debugFile.flatMap { LineTable(image: $0) }
        }
        return lineTableValue
    }
}
