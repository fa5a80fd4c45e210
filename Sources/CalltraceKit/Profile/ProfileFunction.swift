/// One function of a profile, interned: every call names it by index (`ProfileThread.function`).
public struct ProfileFunction: Hashable, Sendable {
    /// Demangled name; `module+0xoffset` when the module's symbols cannot be trusted; `0x...` for an
    /// address in no known module.
    public var name: String
    /// File name of the module holding it (`libfoo.so`), nil if none does.
    public var module: String?
    /// The module's GNU build-id in hex, when it has one.
    public var buildID: String?
    /// Source file and line of its entry, when lines were looked up and DWARF has them.
    public var file: String?
    public var line: Int?

    public init(name: String, module: String? = nil, buildID: String? = nil, file: String? = nil, line: Int? = nil) {
        self.name = name
        self.module = module
        self.buildID = buildID
        self.file = file
        self.line = line
    }

    /// Identity across runs: never an address (which moves with ASLR and rebuilds).
    public var key: FunctionKey { FunctionKey(module: module ?? "", name: name) }
}

/// What makes two functions of two runs the same one: the module's file name and the symbol name.
/// Not the build-id: `diff` compares a program with its previous build, whose build-id differs.
public struct FunctionKey: Hashable, Comparable, Sendable {
    public var module: String
    public var name: String

    public init(module: String, name: String) {
        self.module = module
        self.name = name
    }

    public static func < (a: FunctionKey, b: FunctionKey) -> Bool { (a.name, a.module) < (b.name, b.module) }
}
