import Foundation

/// The `main` of a fuzz target (Sources/FuzzTraceReader, Sources/FuzzElfReader).
///
/// Built by Scripts/fuzz with `-sanitize=fuzzer`, the executable holds libFuzzer and `main`
/// hands it control. A plain `swift build` has no libFuzzer: `main` then runs each input named on
/// the command line (a file, or a directory of files) once, so a saved crash replays under a
/// debugger, or in a build without sanitizers, with no fuzzer at all.
///
/// Why not libFuzzer's own `main`: SwiftPM gives every executable target a `main` of its own
/// (through a renamed entry point), so libFuzzer's never gets linked. Its driver is reached through
/// `LLVMFuzzerRunDriver` instead, which Scripts/fuzz pulls into the link (`-u`) and exports, so
/// that `dlsym` finds it; in a plain build the lookup fails and the inputs run directly.
public enum FuzzDriver {
    /// `LLVMFuzzerTestOneInput`: one input; the return value must be 0.
    public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

    private typealias RunDriver = @convention(c) (
        UnsafeMutablePointer<CInt>,
        UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        TestOneInput
    ) -> CInt

    public static func main(_ testOneInput: TestOneInput) -> Never {
        if let symbol = dlsym(nil, "LLVMFuzzerRunDriver") {
            let runDriver = unsafeBitCast(symbol, to: RunDriver.self)
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runDriver(&argc, &argv, testOneInput))
        }
        let name = (CommandLine.arguments.first as NSString?)?.lastPathComponent ?? "fuzz"
        let paths = CommandLine.arguments.dropFirst().flatMap(inputFiles)
        guard !paths.isEmpty else {
            FileHandle.standardError.write(Data("""
                usage: \(name) INPUT-FILE-OR-DIRECTORY...
                Runs each input once. This build has no libFuzzer: use Scripts/fuzz to fuzz.

                """.utf8))
            exit(2)
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("\(name): cannot read \(path)\n".utf8))
                exit(1)
            }
            _ = data.withUnsafeBytes { bytes in
                testOneInput(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
            }
        }
        FileHandle.standardError.write(Data("\(name): ran \(paths.count) input\(paths.count == 1 ? "" : "s")\n".utf8))
        exit(0)
    }

    /// `path` itself, or the files in it (sorted) when it is a directory.
    private static func inputFiles(_ path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
              let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [path] }
        return names.sorted().map { path + "/" + $0 }
    }
}
