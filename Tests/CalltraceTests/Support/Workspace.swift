import Foundation
import XCTest

/// Where things are for a test run: the package checkout, the products `swift build` made (the
/// `calltrace` CLI and `libcalltrace_rt.so`), and a temporary directory that holds this run's
/// fixture binaries and traces.
enum Workspace {
    /// The package root, found from this file's path.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static let fixtures = packageRoot.appendingPathComponent("Tests/CalltraceTests/Fixtures")
    static let compilerWrapper = packageRoot.appendingPathComponent("Scripts/calltrace-cc")

    /// The directory holding the test bundle is the one `swift build` put every product in.
    static let products: URL = {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return URL(fileURLWithPath: bundle.bundlePath).deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }()

    static var runtimeLibrary: URL { products.appendingPathComponent("libcalltrace_rt.so") }
    static var cli: URL { products.appendingPathComponent("calltrace") }

    /// One temporary directory per test run (mkdtemp: a pid repeats across containers), removed at
    /// exit unless CALLTRACE_KEEP_TEST_FILES is set. Mode 0755, as mkdir made it (mkdtemp makes
    /// 0700); programs that run as another user get a `publicDirectory` instead.
    static let temporary: URL = {
        let url = makeTemporaryDirectory(in: FileManager.default.temporaryDirectory.path,
                                          prefix: "calltrace-tests-", mode: 0o755)
        if ProcessInfo.processInfo.environment["CALLTRACE_KEEP_TEST_FILES"] == nil {
            atexit {
                try? FileManager.default.removeItem(at: Workspace.temporary)
                for url in Workspace.publicDirectories.withLock({ $0 }) { try? FileManager.default.removeItem(at: url) }
            }
        }
        return url
    }()

    /// Directories made by `publicDirectory`, removed with `temporary`.
    private static let publicDirectories = Locked<[URL]>([])

    /// A fresh directory under /tmp that every user can reach and write to (mode 1777), whatever
    /// TMPDIR is and wherever the clone lives: for programs that run as another user, such as a
    /// set-uid program, which cannot enter a clone under /root. Put everything such a program needs
    /// (its binary, the runtime) in here.
    static func publicDirectory(_ name: String) -> URL {
        _ = temporary  // registers the clean-up
        let url = makeTemporaryDirectory(in: "/tmp", prefix: "calltrace-\(name)-", mode: 0o1777)
        publicDirectories.withLock { $0.append(url) }
        return url
    }

    private static func makeTemporaryDirectory(in parent: String, prefix: String, mode: mode_t) -> URL {
        var template = Array((parent + "/" + prefix + "XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mkdtemp($0) != nil } ?? false
        }
        let path = made ? String(cString: template) : parent + "/" + prefix + UUID().uuidString
        if !made { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        chmod(path, mode)  // mkdtemp makes 0700; chmod, unlike mkdir, ignores the umask
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    /// A fresh directory for one test.
    static func directory(_ name: String) -> URL {
        let url = temporary.appendingPathComponent(name + "-" + UUID().uuidString.prefix(8), isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Fails the test (rather than crashing) when the products are missing.
    static func requireProducts(file: StaticString = #filePath, line: UInt = #line) throws {
        for url in [runtimeLibrary, cli] where !FileManager.default.fileExists(atPath: url.path) {
            XCTFail("\(url.path) is missing: build with `swift build` before `swift test`", file: file, line: line)
            throw TestFailure("products missing")
        }
    }
}

/// A value shared between threads (the test runner's atexit handler and the tests).
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
