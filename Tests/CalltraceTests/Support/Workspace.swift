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

    /// One temporary directory per test run, removed at exit unless CALLTRACE_KEEP_TEST_FILES is set.
    static let temporary: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("calltrace-tests-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        if ProcessInfo.processInfo.environment["CALLTRACE_KEEP_TEST_FILES"] == nil {
            atexit { try? FileManager.default.removeItem(at: Workspace.temporary) }
        }
        return url
    }()

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
            throw XCTSkip("products missing")
        }
    }
}
