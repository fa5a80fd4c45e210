/// The traced process, from the PROCESS record. (Not `ProcessInfo`, which would shadow
/// Foundation's in every file that imports both.)
public struct TracedProcess: Equatable, Sendable {
    public var pid: UInt64
    public var ppid: UInt64
    public var executable: String
    public var arguments: [String]
    /// How many arguments the runtime left out of the record because they did not fit a block.
    public var omittedArguments: UInt64

    /// Decodes a PROCESS record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let (pid, ppid, executable, argc) = try body.read(UInt64.self, UInt64.self, String.self, UInt64.self)
        var arguments: [String] = []
        // Each argument takes at least one byte, so a huge argc fails on reading, not on memory.
        for _ in 0..<min(argc, UInt64(body.remaining)) { arguments.append(try body.readString()) }
        guard UInt64(arguments.count) == argc else { throw RecordError.badCount(argc) }
        // Added later: a writer that did not cut the command line leaves it out.
        let omitted = body.isAtEnd ? 0 : try body.readVarint()
        self.init(pid: pid, ppid: ppid, executable: executable, arguments: arguments, omittedArguments: omitted)
    }

    public init(pid: UInt64, ppid: UInt64, executable: String, arguments: [String], omittedArguments: UInt64 = 0) {
        self.omittedArguments = omittedArguments
        self.pid = pid
        self.ppid = ppid
        self.executable = executable
        self.arguments = arguments
    }
}
