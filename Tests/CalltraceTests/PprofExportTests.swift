import CalltraceKit
import Foundation
import XCTest

/// `export --format pprof`, read by the real client: `go tool pprof` (Debian's golang-go, which
/// Scripts/test installs). Its self (flat) and cumulative times and call counts are `top`'s, and its
/// stacks are the tree's.
final class PprofExportTests: XCTestCase {
    func testGoToolPprofReadsTheProfileAsTopAndTheTreeShowIt() throws {
        let go = "/usr/bin/go"
        guard FileManager.default.isExecutableFile(atPath: go) else {
            return XCTFail("go is not installed: Scripts/test installs it (Scripts/deps golang-go)")
        }
        let fixture = try Fixture.build(["nested.c"], compiler: .gcc)
        let (run, trace) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "0", "CALLTRACE_MUTE": "off"])
        XCTAssertEqual(run.status, 0, run.description)
        let profile = fixture.directory.appendingPathComponent("nested.pb.gz")
        let export = try calltrace(["export", "--format", "pprof", "-o", profile.path, trace.path])
        XCTAssertEqual(export.status, 0, export.description)
        let gzip = try Data(contentsOf: profile)
        XCTAssertEqual(Array(gzip.prefix(2)), [0x1F, 0x8B], "gzip framing")

        // top's rows: function -> (calls, total ms, self ms).
        let top = try calltrace(["top", trace.path, "--format", "json"])
        XCTAssertEqual(top.status, 0, top.description)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(top.stdout.utf8)) as? [String: Any])
        var expected: [String: (calls: Int, total: Double, selfTime: Double)] = [:]
        for row in try XCTUnwrap(document["functions"] as? [[String: Any]]) {
            guard let name = row["function"] as? String else { continue }
            expected[name] = (row["calls"] as? Int ?? -1, row["total_ms"] as? Double ?? -1, row["self_ms"] as? Double ?? -1)
        }
        XCTAssertEqual(Set(expected.keys), ["main", "load_config", "parse_section", "draw_frame", "quick"], top.stdout)

        let environment = ["HOME": fixture.directory.path, "GOCACHE": fixture.directory.appendingPathComponent("gocache").path,
                           "PPROF_TMPDIR": fixture.directory.path]
        func pprof(_ arguments: [String]) throws -> [String: (flat: Double, cum: Double)] {
            let result = try Command.run(go, ["tool", "pprof"] + arguments + [profile.path], environment: environment,
                                         timeout: 300)
            XCTAssertEqual(result.status, 0, result.description)
            var rows: [String: (flat: Double, cum: Double)] = [:]
            // "   24.20ms 41.40% 41.40%    24.20ms 41.40%  parse_section"
            for line in result.stdout.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 6, fields[1].hasSuffix("%"), let flat = Self.value(fields[0]),
                      let cum = Self.value(fields[3]) else { continue }
                rows[String(fields[5])] = (flat, cum)
            }
            return rows
        }
        let times = try pprof(["-top", "-nodecount=100", "-nodefraction=0", "-unit=ms"])
        let calls = try pprof(["-top", "-nodecount=100", "-nodefraction=0", "-sample_index=calls"])
        for (name, want) in expected {
            let time = try XCTUnwrap(times[name], "\(name) in go tool pprof -top: \(times)")
            XCTAssertEqual(time.flat, want.selfTime, accuracy: 0.011, "\(name) self")
            XCTAssertEqual(time.cum, want.total, accuracy: 0.011, "\(name) total")
            XCTAssertEqual(try XCTUnwrap(calls[name]).flat, Double(want.calls), "\(name) calls")
        }
        // Stacks, leaf first: parse_section under load_config under main.
        let traces = try Command.run(go, ["tool", "pprof", "-traces", profile.path], environment: environment, timeout: 300)
        XCTAssertEqual(traces.status, 0, traces.description)
        let stacks = traces.stdout.components(separatedBy: "-----------+").map {
            $0.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
                .filter { !$0.isEmpty && !$0.hasPrefix("-") }
        }
        XCTAssertTrue(stacks.contains(["parse_section", "load_config", "main"]), traces.stdout)
        XCTAssertTrue(stacks.contains(["draw_frame", "main"]), traces.stdout)
    }

    /// `24.20ms`, `52.52us`, `1.2s`, `1000` (counts) as milliseconds (counts as they are).
    private static func value(_ text: Substring) -> Double? {
        for (suffix, scale) in [("ms", 1.0), ("us", 0.001), ("ns", 0.000001), ("s", 1000.0)] where text.hasSuffix(suffix) {
            return Double(text.dropLast(suffix.count)).map { $0 * scale }
        }
        return Double(text)
    }
}
