import Foundation
import XCTest

/// A throwaway Python virtual environment with PyPI packages, made once per test run under the
/// run's temporary directory (removed with it) and shared by the tests that validate exports with
/// official definitions (Perfetto's protos, OpenTelemetry's). Nothing is cached in the repository.
enum PythonVenv {
    private static let made = Locked<[String: Result<URL, PythonVenvError>]>([:])

    /// The venv's python3 with `packages` installed. A missing python3 (Scripts/setup installs it)
    /// or a failing `pip install` fails the test.
    static func python(with packages: [String], file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        guard let system = systemPython() else {
            throw failure("python3 is not installed (Scripts/setup installs it)", file: file, line: line)
        }
        let key = packages.sorted().joined(separator: " ")
        let result: Result<URL, PythonVenvError> = made.withLock { venvs in
            if let known = venvs[key] { return known }
            let result = create(system: system, packages: packages.sorted())
            venvs[key] = result
            return result
        }
        switch result {
        case .success(let python): return python
        case .failure(let error):
            XCTFail(error.message, file: file, line: line)
            throw error
        }
    }

    /// Runs `script` (Python source) with the venv's python and `arguments`.
    static func run(_ script: String, arguments: [String] = [], packages: [String], stdin: String? = nil,
                    file: StaticString = #filePath, line: UInt = #line) throws -> CommandResult {
        let python = try python(with: packages, file: file, line: line)
        let scriptURL = Workspace.temporary.appendingPathComponent("script-\(UUID().uuidString).py")
        try script.write(to: scriptURL, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: scriptURL) }
        return try Command.run(python.path, [scriptURL.path] + arguments, stdin: stdin, timeout: 300)
    }

    private static func systemPython() -> URL? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("python3")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    private static func create(system: URL, packages: [String]) -> Result<URL, PythonVenvError> {
        let directory = Workspace.temporary.appendingPathComponent("venv-\(UUID().uuidString.prefix(8))")
        do {
            let venv = try Command.run(system.path, ["-m", "venv", directory.path], timeout: 300)
            guard venv.status == 0 else { return .failure(PythonVenvError("python3 -m venv failed:\n\(venv)")) }
            let python = directory.appendingPathComponent("bin/python3")
            let pip = try Command.run(python.path, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
                                      + packages, timeout: 600)
            guard pip.status == 0 else {
                return .failure(PythonVenvError("pip install \(packages.joined(separator: " ")) failed:\n\(pip)"))
            }
            return .success(python)
        } catch {
            return .failure(PythonVenvError("cannot make a Python venv: \(error)"))
        }
    }
}

struct PythonVenvError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
