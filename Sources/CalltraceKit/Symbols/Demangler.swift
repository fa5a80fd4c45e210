import CalltraceGlue

/// Turns mangled symbol names into source form, caching each answer; other names pass through
/// unchanged. Maintained demanglers only, chosen by the name's prefix:
///
/// - `_Z`: C++ (Itanium ABI: `_ZN3foo3barEv` → `foo::bar()`) and legacy Rust
///   (`_ZN4core3fmt5write17h<hash>E` → `core::fmt::write`, without the hash, as rustfilt prints
///   it), through libiberty (the demangler of c++filt and gdb);
/// - `_R`: Rust v0 (`_RNvCs..._7mycrate3foo` → `mycrate::foo`), libiberty too;
/// - `$s`, `_$s`, `$S`, `_$S`, `_T0`: Swift (`$s4main3fooyyF` → `main.foo() -> ()`), through the
///   Swift runtime's `swift_demangle`.
///
/// Any other name, such as a C function named `Zap`, is never handed to a demangler; a name with
/// a known prefix that no demangler reads (`_Reset` goes to libiberty, which refuses it) stays as
/// it is, and so does a name longer than `maximumLength`.
///
/// gcc's copies of a function (`f.constprop.0`, `f.isra.0`, `f.part.0`, `f.lto_priv.0`; in C++
/// `f(int) [clone .isra.0]`) are shown as the function they copy: a build with sleds times the
/// copies themselves, as separate functions, where -finstrument-functions' hooks named the
/// original, and the reader thinks in source functions.
final class Demangler {
    private var cache: [String: String] = [:]

    init() {}

    /// Longer names are shown as they are: `swift_demangle` recurses once per nesting level and
    /// a crafted name (a trace's stored table comes from anywhere) could exhaust the stack;
    /// libiberty stops at about 1 KiB of nesting on its own. Real symbols are far shorter.
    static let maximumLength = 4096

    func demangle(_ name: String) -> String {
        guard name.utf8.count <= Self.maximumLength else { return name }
        guard let scheme = Scheme(of: name) else { return name.contains(".") ? Self.withoutCloneSuffix(name) : name }
        if let known = cache[name] { return known }
        var result = Self.demangled(name, scheme) ?? name
        if scheme == .itaniumOrRust, let clone = result.range(of: " [clone .") {
            result = String(result[..<clone.lowerBound])
        }
        cache[name] = result
        return result
    }

    /// The kinds of copies gcc makes of a function, as the suffixes it gives their names.
    private static let cloneKinds: Set<Substring> = ["constprop", "isra", "part", "lto_priv", "localalias", "cold", "clone"]

    /// A C name without gcc's clone suffixes: `f.constprop.0.isra.0` is `f`; any other dotted name
    /// stays as it is.
    static func withoutCloneSuffix(_ name: String) -> String {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count > 1, let first = parts.first, !first.isEmpty,
              first.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else { return name }
        var sawKind = false
        for part in parts.dropFirst() {
            if cloneKinds.contains(part) { sawKind = true; continue }
            guard sawKind, !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isNumber }) else { return name }
        }
        return sawKind ? String(first) : name
    }

    private enum Scheme {
        case itaniumOrRust, swift

        init?(of name: String) {
            guard name.utf8.count > 2 else { return nil }
            if name.hasPrefix("_Z") || name.hasPrefix("_R") {
                self = .itaniumOrRust
            } else if name.hasPrefix("$s") || name.hasPrefix("_$s") || name.hasPrefix("$S")
                        || name.hasPrefix("_$S") || name.hasPrefix("_T0") {
                self = .swift
            } else {
                return nil
            }
        }
    }

    private static func demangled(_ name: String, _ scheme: Scheme) -> String? {
        // A symbol name never holds a NUL; a string that does is not one.
        guard !name.utf8.contains(0) else { return nil }
        let text: UnsafeMutablePointer<CChar>?
        switch scheme {
        case .itaniumOrRust:
            text = ct_demangle(name)
        case .swift:
            text = name.withCString { swift_demangle($0, name.utf8.count, nil, nil, 0) }
        }
        guard let text else { return nil }
        defer { ct_demangle_free(text) }
        let result = String(cString: text)
        return result.isEmpty ? nil : result
    }
}
