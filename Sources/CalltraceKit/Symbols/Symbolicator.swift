/// Names the addresses of a trace: function name (demangled: C++, Rust, Swift), module, and optionally
/// source file and line.
///
/// Each module's ELF file is opened on first need and kept; each answer is cached, so asking
/// for the same address again is a dictionary lookup. Not thread-safe: use one per thread.
///
/// A name is never a guess. When a module's file is missing, unreadable, not ELF, or not the
/// file the trace recorded (build-id differs; without a build-id, modified after it was loaded),
/// `warn` is called once for it and its addresses are named `module+0xoffset`, the offset being
/// the ELF virtual address (address - base).
///
/// A trace that stores its names (`calltrace symbolize`, `TraceModule.storedSymbols`) is answered
/// from them first, whatever the ELF files are now; addresses the table lacks come from the files.
public final class Symbolicator {
    private let modules: [TraceModule]
    private let lines: Bool
    private let warn: (String) -> Void
    private let images: ElfImageCache
    private let demangler = Demangler()
    private var cache: [CacheKey: Symbol] = [:]
    private var dataCache: [UInt64: String?] = [:]
    /// Module indexes sorted by `lo`, searched by bisection when no two ranges overlap
    /// (the usual case: no library was unloaded and another loaded in its place).
    private let byLow: [Int]
    private let rangesOverlap: Bool
    /// Names as the symbol table has them, not demangled (for storing them in the trace).
    var keepsRawNames = false

    private struct CacheKey: Hashable {
        var address: UInt64
        var module: Int
    }

    /// - Parameters:
    ///   - lines: also look up source file and line in DWARF (slower: opens debug info).
    ///   - warn: receives one line per module whose functions cannot be named.
    public convenience init(modules: [TraceModule], lines: Bool = false, warn: @escaping (String) -> Void) {
        self.init(modules: modules, lines: lines, locator: DebugFileLocator(), warn: warn)
    }

    /// `locator` lets tests use their own debug directory.
    init(modules: [TraceModule], lines: Bool, locator: DebugFileLocator, warn: @escaping (String) -> Void) {
        self.modules = modules
        self.lines = lines
        self.warn = warn
        self.images = ElfImageCache(locator: locator)
        let byLow = modules.indices.filter { modules[$0].lo < modules[$0].hi }
            .sorted { modules[$0].lo < modules[$1].lo }
        self.byLow = byLow
        self.rangesOverlap = zip(byLow, byLow.dropFirst()).contains { modules[$1].lo < modules[$0].hi }
    }

    /// True when no two modules ever shared an address range, so an address names the same
    /// function whenever a call to it ended.
    public var addressesAreUnambiguous: Bool { !rangesOverlap }

    /// The calltrace runtime's file name: a lock in its data is the tracer's, not the program's.
    static let runtimeLibrary = "libcalltrace_rt.so"

    /// The name of the variable (a data object of a module's symbol table) holding `address`: a
    /// lock a thread was blocked on in a futex, say (a mutex's futex word is its first field, a
    /// condition variable's lies inside it: the object whose `[start, start + size)` holds the
    /// address names both). Nil when no module's data holds it (a lock in a heap object, on a
    /// stack), when its module's file cannot be read or is not the one recorded, or when modules
    /// that held the address at different times would name it differently: never a guess. A lock
    /// of the calltrace runtime's is "(calltrace runtime)".
    public func dataSymbol(at address: UInt64) -> String? {
        if let known = dataCache[address] { return known }
        // `lo..<hi` spans all of a module's PT_LOAD segments, its .data and .bss with its text.
        var names: Set<String> = []
        var unnamed = false
        for module in modules where module.contains(address) {
            // The program waited on the tracer itself (its start, a full ring): said as such.
            if module.pathBytes.split(separator: UInt8(ascii: "/")).last.map({ Array($0) })
                == Array(Self.runtimeLibrary.utf8) {
                names.insert("(calltrace runtime)")
                continue
            }
            if let name = objectName(address, in: module) { names.insert(name) } else { unnamed = true }
        }
        let name = names.count == 1 && !unnamed ? names.first : nil
        dataCache[address] = name
        return name
    }

    private func objectName(_ address: UInt64, in module: TraceModule) -> String? {
        let vaddr = address &- module.base
        guard case .success(let image) = images.image(path: module.pathBytes, buildID: module.buildID,
                                                      loadedBy: module.seenTime).result,
              image.image.isMapped(vaddr), let name = image.objectSymbols.name(containing: vaddr) else { return nil }
        return keepsRawNames ? name : demangler.demangle(name)
    }

    /// `tick` is the end tick of the record, to choose among modules loaded at the same address
    /// over time: the first, in unload order, whose range holds the address and that was not gone
    /// before `tick`.
    public func symbolicate(_ address: UInt64, atTick tick: Ticks) -> Symbol {
        guard let index = moduleIndex(holding: address, atTick: tick) else {
            return Symbol(name: TextFormat.hex(address))
        }
        let key = CacheKey(address: address, module: index)
        if let known = cache[key] { return known }
        let symbol = resolve(address, in: modules[index])
        cache[key] = symbol
        return symbol
    }

    /// The module that held `address` when a call ending at `tick` ended (see `symbolicate`).
    public func module(holding address: UInt64, atTick tick: Ticks) -> TraceModule? {
        moduleIndex(holding: address, atTick: tick).map { modules[$0] }
    }

    // MARK: - Choosing the module

    func moduleIndex(holding address: UInt64, atTick tick: Ticks) -> Int? {
        if !rangesOverlap {
            // Last module starting at or before the address.
            var low = 0
            var high = byLow.count
            while low < high {
                let mid = (low + high) / 2
                if modules[byLow[mid]].lo <= address { low = mid + 1 } else { high = mid }
            }
            guard low > 0, modules[byLow[low - 1]].contains(address) else { return nil }
            return byLow[low - 1]
        }
        let holders = modules.indices.filter { modules[$0].contains(address) }
        guard holders.count > 1 else { return holders.first }
        // Modules that shared an address held it one after another, each until its dlclose. The
        // runtime notices a load late (it polls), but writes an unload down at once (it wraps
        // dlclose): so the module that held the address when the record ended is the first one,
        // in unload order, not yet gone by then. The load time is not trusted.
        func goneOrder(_ index: Int) -> Ticks { modules[index].goneTick ?? .max }
        let present = holders.filter { goneOrder($0) >= tick }
        if let first = present.min(by: { (goneOrder($0), modules[$0].seenTick) < (goneOrder($1), modules[$1].seenTick) }) {
            return first
        }
        return holders.max { goneOrder($0) < goneOrder($1) } // all gone before the tick: the last to go
    }

    // MARK: - Naming

    private func resolve(_ address: UInt64, in module: TraceModule) -> Symbol {
        let vaddr = address &- module.base
        var symbol = Symbol(name: "\(module.name)+\(TextFormat.hex(vaddr))", module: module.name)
        if let table = module.storedSymbols, let stored = table.symbol(at: vaddr) {
            return storedSymbol(stored, linesLookedUp: table.hasLines, vaddr: vaddr, module: module, base: symbol)
        }
        let (result, isNew) = images.image(path: module.pathBytes, buildID: module.buildID, loadedBy: module.seenTime)
        let image: ModuleImage
        switch result {
        case .success(let opened):
            image = opened
            if isNew && image.functionSymbols.count == 0 {
                warn("\(module.path) has no symbol table (stripped, and no matching debug file was found); "
                     + "its functions are shown as \(module.name)+offset")
            }
        case .failure(let error):
            if isNew { warn(Self.warning(for: error, module: module)) }
            return symbol
        }
        // An address outside the file's segments means the file is not what was mapped
        // (only possible when the trace has no build-id to compare).
        guard image.image.isMapped(vaddr) else { return symbol }
        if let name = image.functionSymbols.name(containing: vaddr) {
            symbol.name = keepsRawNames ? name : demangler.demangle(name)
        }
        if lines, let location = image.lineTable?.location(of: vaddr) {
            symbol.file = location.file
            symbol.line = location.line
        }
        return symbol
    }

    // MARK: - Names the trace stores

    /// The trace's stored name for an address. Lines the table did not look up come from the
    /// ELF file, when it is still the one recorded; else there are none.
    private func storedSymbol(_ stored: StoredSymbol, linesLookedUp: Bool, vaddr: UInt64, module: TraceModule,
                              base: Symbol) -> Symbol {
        var symbol = base
        if !stored.name.isEmpty { symbol.name = keepsRawNames ? stored.name : demangler.demangle(stored.name) }
        guard lines else { return symbol }
        if linesLookedUp {
            symbol.file = stored.file
            symbol.line = stored.line
        } else if case .success(let image) = images.image(path: module.pathBytes, buildID: module.buildID,
                                                          loadedBy: module.seenTime).result,
                  image.image.isMapped(vaddr), let location = image.lineTable?.location(of: vaddr) {
            symbol.file = location.file
            symbol.line = location.line
        }
        return symbol
    }

    /// What to store in the trace for `address` in module `index`: the raw name and the line, from
    /// the stored table or the ELF file; nil when neither knows the address.
    func storable(_ address: UInt64, inModule index: Int) -> StoredSymbol? {
        guard modules.indices.contains(index) else { return nil }
        let module = modules[index]
        let raw = keepsRawNames
        keepsRawNames = true
        defer { keepsRawNames = raw }
        let symbol = resolve(address, in: module)
        let named = symbol.name != "\(module.name)+\(TextFormat.hex(address &- module.base))"
        guard named || symbol.line != nil else { return nil }
        return StoredSymbol(name: named ? symbol.name : "", file: symbol.file, line: symbol.line)
    }

    private static func warning(for error: ElfImageError, module: TraceModule) -> String {
        let consequence = "its functions are shown as \(module.name)+offset"
        switch error {
        case .buildIDMismatch:
            return "\(module.name) changed since the trace was recorded (build-id differs); \(consequence)"
        case .modifiedSinceRecording:
            return "\(module.name) changed since the trace was recorded (it has no build-id, and the file "
                + "was modified after it was loaded); \(consequence)"
        case .fileNotFound:
            return "\(module.path) no longer exists; \(consequence)"
        default:
            return "\(error); \(consequence)"
        }
    }

}
