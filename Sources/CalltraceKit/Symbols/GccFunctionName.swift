/// The name gcc matches `-finstrument-functions-exclude-function-list` entries against, derived
/// from the name calltrace shows. gcc looks for each entry as a substring of the function's
/// "printable name": for C the identifier, for C++ the qualified name without parameters or
/// return type (`ns::Cls::m` for `ns::Cls::m(int) const`), template arguments included.
enum GccFunctionName {
    /// nil when gcc's form cannot be derived for certain: an address (`0x...`, `lib.so+0x...`),
    /// or a C++ template, operator, lambda or anonymous-namespace function.
    static func pattern(for shown: String) -> String? {
        // `0x...` and `lib.so+0x...` are addresses; `_Z...` is a C++ name the demangler could not read.
        guard !shown.contains("+"), !shown.hasPrefix("_Z") else { return nil }
        let name = withoutCloneSuffix(shown)
        if let paren = name.firstIndex(of: "(") {
            // C++ (a C identifier never holds a parenthesis): the qualified name before the parameters.
            let qualified = name[..<paren]
            guard !qualified.isEmpty, !qualified.contains("operator"),
                  qualified.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_:~".contains($0)) }),
                  !qualified.hasPrefix(":"), !qualified.hasSuffix(":") else { return nil }
            return String(qualified)
        }
        guard let first = name.first, first.isASCII, first.isLetter || first == "_",
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else { return nil }
        return name
    }

    /// The source function's name without the suffix gcc gives the copies it makes:
    /// `f.constprop.0`, `f.part.1`, `f.isra.0`, `f.cold` (C); `f(int) [clone .constprop.0]` (C++).
    static func withoutCloneSuffix(_ name: String) -> String {
        if let clone = name.range(of: " [clone ") { return String(name[..<clone.lowerBound]) }
        if !name.contains("("), let dot = name.firstIndex(of: "."), dot != name.startIndex {
            return String(name[..<dot])
        }
        return name
    }
}
