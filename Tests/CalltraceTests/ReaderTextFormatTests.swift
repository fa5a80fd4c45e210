@testable import CalltraceKit
import XCTest

/// The one formatter for milliseconds, thresholds and hex that every message and view uses.
final class ReaderTextFormatTests: XCTestCase {
    func testThresholdsAreWrittenInTheirLargestWholeUnit() {
        let cases: [(Int64, String)] = [
            (0, "0"), (800, "800ns"), (250_000, "250us"), (1_500_000, "1.5ms"), (10_000_000, "10ms"),
            (2_000_000_000, "2s"), (1_234_567, "1.235ms"), (999_999_999, "1000ms"), (1_000_500, "1.001ms"),
        ]
        for (ns, text) in cases {
            XCTAssertEqual(Threshold.format(Nanoseconds(ns)), text, "\(ns) ns")
        }
    }

    func testMillisecondsRoundHalfUpWithoutFloatingPoint() {
        XCTAssertEqual(Nanoseconds(12_114_999).description, "12.11 ms")
        XCTAssertEqual(Nanoseconds(12_115_000).description, "12.12 ms")
        XCTAssertEqual(Nanoseconds(0).description, "0.00 ms")
        XCTAssertEqual(Nanoseconds(-4_000).description, "0.00 ms", "no -0.00")
        XCTAssertEqual(TextFormat.milliseconds(Nanoseconds(Int64.max), decimals: 6), "9223372036854.775807")
    }

    func testHex() {
        XCTAssertEqual(TextFormat.hex(UInt64(0x401a2f)), "0x401a2f")
        XCTAssertEqual(TextFormat.hex(UInt8(0x85)), "0x85")
        XCTAssertEqual(TextFormat.hexDigits([0x0a, 0xff, 0x00]), "0aff00")
        XCTAssertEqual(TraceModule(path: "/x", base: 0, lo: 0, hi: 0, buildID: [1, 0xab], seenTick: 0).buildIDHex, "01ab")
    }
}
