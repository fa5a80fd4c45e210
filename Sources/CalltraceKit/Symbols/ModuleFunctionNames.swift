/// Every function name the ELF files behind some trace modules define, demangled: for a tool that
/// must know what else a name pattern could match besides the calls a trace holds (a function
/// that was never called has no record, but a compiler's name filter still sees it).
///
/// A module whose file cannot be opened or is not the recorded one (build-id, modification time)
/// contributes no names; the `Symbolicator` reading the same trace already warns about it.
public enum ModuleFunctionNames {
    public static func names(definedIn modules: [TraceModule]) -> Set<String> {
        let images = ElfImageCache()
        let demangler = Demangler()
        var names = Set<String>()
        for module in modules {
            let (result, isNew) = images.image(path: module.pathBytes, buildID: module.buildID,
                                               loadedBy: module.seenTime)
            guard isNew, case .success(let image) = result else { continue }
            for name in image.functionSymbols.names {
                names.insert(demangler.demangle(name))
            }
        }
        return names
    }
}
