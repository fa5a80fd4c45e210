/// What an address in a trace stands for.
public struct Symbol: Sendable, Equatable {
    /// The function name, demangled; `module+0xoffset` when the module's file cannot be trusted
    /// or has no symbol there; `0x...` for an address in no known module.
    public var name: String
    /// File name of the module holding the address (`libfoo.so`), nil if none does.
    public var module: String?
    /// Source file and line of the address, when line lookup is on and DWARF has them.
    public var file: String?
    public var line: Int?

    public init(name: String, module: String? = nil, file: String? = nil, line: Int? = nil) {
        self.name = name
        self.module = module
        self.file = file
        self.line = line
    }
}
