import CalltraceSettings
import XCTest

/// The settings table (CShims/settings/include/ct_settings.inc) is sound: every default passes its
/// own row's parser (a default that did not would leave the setting zeroed, silently), and each
/// variable and field appears once.
final class SettingsTableTests: XCTestCase {
    private struct Row {
        var field, variable, defaultValue, expected: String
        var index: Int
    }

    private var rows: [Row] {
        (0..<ct_setting_count()).compactMap { index in
            ct_setting_row(index).map {
                Row(field: String(cString: $0.pointee.field), variable: String(cString: $0.pointee.variable),
                    defaultValue: String(cString: $0.pointee.default_value),
                    expected: String(cString: $0.pointee.expected), index: index)
            }
        }
    }

    func testEveryDefaultIsAValidValueOfItsSetting() {
        XCTAssertEqual(rows.count, ct_setting_count())
        XCTAssertNil(ct_setting_row(ct_setting_count()), "no row past the end")
        for row in rows {
            var value: UInt64 = 0
            XCTAssertTrue(ct_setting_check(row.index, row.defaultValue, &value), "\(row.variable)=\(row.defaultValue)")
            XCTAssertFalse(row.expected.isEmpty, row.variable)
        }
    }

    func testVariablesAndFieldsAreUniqueAndNamedForCalltrace() {
        XCTAssertEqual(Set(rows.map(\.variable)).count, rows.count)
        XCTAssertEqual(Set(rows.map(\.field)).count, rows.count)
        for row in rows {
            XCTAssertEqual(row.variable, "CALLTRACE_" + row.field.uppercased(), "variable named for its field")
        }
    }

    func testCheckReturnsTheValueInTheSettingsUnit() {
        func value(_ variable: String, _ text: String) -> UInt64? {
            guard let row = rows.first(where: { $0.variable == variable }) else { return nil }
            var value: UInt64 = 0
            return ct_setting_check(row.index, text, &value) ? value : nil
        }
        XCTAssertEqual(value("CALLTRACE_THRESHOLD", "1.5ms"), 1_500_000, "nanoseconds")
        XCTAssertEqual(value("CALLTRACE_THRESHOLD", "10"), 10_000_000, "a bare number is ms")
        XCTAssertEqual(value("CALLTRACE_BUFFER", "16M"), 16 << 20, "bytes")
        XCTAssertEqual(value("CALLTRACE_THREADS", "all"), 1)
        XCTAssertEqual(value("CALLTRACE_MAX_DEPTH", "4194304"), 4_194_304)
        XCTAssertEqual(value("CALLTRACE_OUTPUT", "a.trace"), 7, "a path's length")
        XCTAssertNil(value("CALLTRACE_MAX_DEPTH", "4194305"))
        XCTAssertEqual(value("CALLTRACE_FRAME", "16.666667ms"), 16_666_667, "the default, in ns")
        XCTAssertEqual(value("CALLTRACE_FRAME", "33ms"), 33_000_000)
        XCTAssertNil(value("CALLTRACE_FRAME", "0"), "a frame interval must be above 0")
        XCTAssertEqual(value("CALLTRACE_FILTER", ""), 0, "no filter")
        XCTAssertEqual(value("CALLTRACE_FILTER", "-log_*, render"), 14, "a filter's length")
        XCTAssertEqual(value("CALLTRACE_FILTER", "ns::Klass::method*,-[ab]?"), 25)
        for bad in ["a,,b", "-", "work,", " , x", String(repeating: "x", count: 1024)] {
            XCTAssertNil(value("CALLTRACE_FILTER", bad), "'\(bad.prefix(20))' is not a filter")
        }
        XCTAssertFalse(ct_setting_check(ct_setting_count(), "1", nil), "no row past the end")
    }
}
