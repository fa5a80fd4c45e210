/// Reads one ELF file through everything `calltrace report` uses to name addresses in it: the
/// headers, build-id, segments and debug link (`ElfImage`), the debug-file search, the function
/// symbols, C++ demangling and DWARF lines. For the fuzz target in Sources/FuzzElfReader: package
/// access, not API.
package enum ElfReaderProbe {
    /// Looks up at most this many addresses per file, so a huge symbol table stays fast to fuzz.
    static let addressLimit = 256

    /// Returns how many lookups found a name or a line. `debugRoot` stands in for /usr/lib/debug,
    /// so the probe never opens the system's debug files.
    @discardableResult
    package static func probe(path: String, debugRoot: String) -> Int {
        guard let image = try? ElfImage(path: path) else { return 0 }
        let module = ModuleImage(image: image, locator: DebugFileLocator(root: debugRoot))
        let symbols = module.functionSymbols
        // Both ends of every segment and of the first symbols: the edges are where lookups go wrong.
        var addresses = image.segments.flatMap { [$0.vaddr, $0.vaddr &+ $0.memorySize &- 1, $0.vaddr &+ $0.memorySize] }
        for index in 0..<min(symbols.count, addressLimit) {
            addresses += [symbols.starts[index], symbols.ends[index] &- 1, symbols.ends[index]]
        }
        let demangler = Demangler()
        var found = 0
        for address in addresses.prefix(addressLimit) where image.isMapped(address) {
            if let name = symbols.name(containing: address) {
                found += demangler.demangle(name).isEmpty ? 0 : 1
            }
            if module.lineTable?.location(of: address) != nil { found += 1 }
        }
        return found
    }
}
