/// The traced process, from the PROCESS record. (Not `ProcessInfo`, which would shadow
/// Foundation's in every file that imports both.)
public struct TracedProcess: Equatable, Sendable {
    public var pid: UInt64
    public var ppid: UInt64
    public var executable: String
    public var arguments: [String]

    public init(pid: UInt64, ppid: UInt64, executable: String, arguments: [String]) {
        self.pid = pid
        self.ppid = ppid
        self.executable = executable
        self.arguments = arguments
    }
}
