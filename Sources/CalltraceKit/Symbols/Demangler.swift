import CalltraceGlue

/// Turns Itanium C++ ABI names (`_ZN3foo3barEv`) into source form (`foo::bar()`) through
/// libstdc++'s `__cxa_demangle`, caching each answer. Other names pass through unchanged.
final class Demangler {
    private var cache: [String: String] = [:]

    init() {}

    func demangle(_ name: String) -> String {
        // Only `_Z` names are C++; a C function named e.g. `Zap` must stay as it is.
        guard name.hasPrefix("_Z") else { return name }
        if let known = cache[name] { return known }
        var result = name
        if let demangled = ct_demangle(name) {
            result = String(cString: demangled)
            ct_demangle_free(demangled)
        }
        cache[name] = result
        return result
    }
}
