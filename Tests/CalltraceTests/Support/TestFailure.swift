import XCTest

/// Thrown to end a test that has already recorded why it failed (an `XCTFail` just before): a tool
/// Scripts/setup installs that is missing, a fixture that did not build. Not an `XCTSkip`: on CI a
/// skipped test is a failure hidden in the count.
struct TestFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

/// Records `message` as the test's failure and returns the error that ends it.
func failure(_ message: String, file: StaticString = #filePath, line: UInt = #line) -> TestFailure {
    XCTFail(message, file: file, line: line)
    return TestFailure(message)
}
