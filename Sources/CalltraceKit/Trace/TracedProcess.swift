/// The traced process, from the PROCESS record. (Not `ProcessInfo`, which would shadow
/// Foundation's in every file that imports both.)
public struct TracedProcess: Equatable, Sendable {
    public var pid: UInt64
    public var ppid: UInt64
    public var executable: String
    public var arguments: [String]
    /// How many arguments the runtime left out of the record because they did not fit a block.
    public var omittedArguments: UInt64

    public init(pid: UInt64, ppid: UInt64, executable: String, arguments: [String], omittedArguments: UInt64 = 0) {
        self.omittedArguments = omittedArguments
        self.pid = pid
        self.ppid = ppid
        self.executable = executable
        self.arguments = arguments
    }
}
