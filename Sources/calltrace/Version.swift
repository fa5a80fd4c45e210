/// The version `calltrace --version` prints. The one place it is written: change it here.
enum CalltraceVersion {
    static let current = "0.1.0"
}
