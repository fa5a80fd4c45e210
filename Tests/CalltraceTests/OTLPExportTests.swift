@testable import CalltraceKit
import Foundation
import XCTest

/// `export --format otlp` and `--endpoint`: every line parsed with OpenTelemetry's own protobuf
/// definitions (PyPI's opentelemetry-proto, in a throwaway venv), on a synthetic trace with exact
/// expectations, on a real program through the CLI, and posted to a local OTLP/HTTP receiver.
final class OTLPExportTests: XCTestCase {
    private typealias T = SyntheticTrace
    private static let ms: UInt64 = 1_000_000
    /// The synthetic trace's clock: tick 0 is this unix time (its header's realtime_ns0).
    private static let unixStart: UInt64 = 1_700_000_000_000_000_000
    private static let packages = ["opentelemetry-proto", "protobuf"]

    // MARK: - Synthetic

    ///   main 0x1000 [0, 100 ms) > { 0x2000 [10, 40 ms) > 0x3000 [15, 25 ms); 0x2000 [50, 90 ms) }
    /// on thread 4242 "main" of /usr/bin/app, a mark "ready" (extra "fast") at 30 ms.
    private func profile(pid: UInt64 = 4242) throws -> Profile {
        let ms = Self.ms
        var trace = T()
        trace.pid = pid
        let metadata = T.process(executable: "/usr/bin/app", arguments: ["app", "-v"])
            + T.thread(stream: 1, tid: pid, name: "main") + T.mark("ready", extra: "fast", tick: 30 * ms, tid: pid)
        trace.blocks = [.init(stream: 1, tid: pid, seq: 0, payload: FourCalls.payload()),
                        .init(stream: 0, tid: 0, seq: 0, payload: metadata)]
        return try syntheticProfile(trace.bytes)
    }

    private var options: ViewOptions {
        var options = ViewOptions()
        options.hostName = "build-7"
        options.version = "9.8.7"
        return options
    }

    func testSpansParseWithTheOfficialProtosWithParentsAndUnixTimes() throws {
        let text = OTLPExport.text(ViewInput([try profile()]), options: options)
        let requests = try Self.parse(text)
        XCTAssertEqual(requests.count, 1, text)
        let request = try XCTUnwrap(requests.first)
        XCTAssertEqual(request.resource["service.name"] as? String, "app")
        XCTAssertEqual(request.resource["process.pid"] as? Int, 4242)
        XCTAssertEqual(request.resource["process.executable.name"] as? String, "app")
        XCTAssertEqual(request.resource["process.executable.path"] as? String, "/usr/bin/app")
        XCTAssertEqual(request.resource["process.command_args"] as? [String], ["app", "-v"])
        XCTAssertEqual(request.resource["host.name"] as? String, "build-7")
        XCTAssertEqual(request.resource["telemetry.sdk.name"] as? String, "calltrace")
        XCTAssertEqual(request.scope, "calltrace 9.8.7")

        let spans = request.spans
        XCTAssertEqual(Set(spans.map(\.traceID)).count, 1, "one trace")
        XCTAssertEqual(spans[0].traceID.count, 32)
        XCTAssertNotEqual(spans[0].traceID, String(repeating: "0", count: 32))
        XCTAssertEqual(Set(spans.map(\.spanID)).count, spans.count, "span ids are unique")
        XCTAssertTrue(spans.allSatisfy { $0.kind == 1 }, "SPAN_KIND_INTERNAL")
        // (name, parent's name and start, start and end in ms since the trace's start)
        let byID = Dictionary(uniqueKeysWithValues: spans.map { ($0.spanID, $0) })
        let shape = spans.map { span -> String in
            let parent = byID[span.parentID].map { "\($0.name)@\(Self.offsetMs($0.start))" } ?? "-"
            return "\(span.name) under \(parent) [\(Self.offsetMs(span.start)), \(Self.offsetMs(span.end)))"
        }
        XCTAssertEqual(shape.sorted(), [
            "0x1000 under app@0 [0, 100)",
            "0x2000 under 0x1000@0 [10, 40)",
            "0x2000 under 0x1000@0 [50, 90)",
            "0x3000 under 0x2000@10 [15, 25)",
            "app under - [0, 100)",
            "ready under 0x2000@10 [30, 30)",
        ], "\(spans)")
        XCTAssertEqual(spans.filter { $0.parentID.isEmpty }.count, 1, "the process span alone has no parent")
        let inner = try XCTUnwrap(spans.first { $0.name == "0x3000" })
        XCTAssertEqual(inner.attributes["code.function.name"] as? String, "0x3000")
        XCTAssertEqual(inner.attributes["thread.id"] as? Int, 4242)
        XCTAssertEqual(inner.attributes["thread.name"] as? String, "main")
        XCTAssertEqual(inner.attributes["calltrace.cost_ns"] as? Int, 10_000_000)
        let mark = try XCTUnwrap(spans.first { $0.name == "ready" })
        XCTAssertEqual(mark.attributes["calltrace.mark"] as? Bool, true)
        XCTAssertEqual(mark.attributes["calltrace.mark.extra"] as? String, "fast")
        XCTAssertEqual(spans.first { $0.name == "app" }?.attributes["calltrace.exit"] as? String, "clean")
    }

    /// The program's spans: one OTLP span each under the process span, milestones as span events,
    /// the extra text and threads as attributes; an unfinished one ends when the trace ended.
    func testProgramSpansAreSpansWithMilestoneEvents() throws {
        var profile = try profile()
        func at(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }
        profile.ended = at(120)
        let plain = OTLPExport.text(ViewInput([profile]), options: options)
        profile.spans = [
            ProfileSpan(name: "open", extra: "path=a", begin: at(5), end: at(45), beginTid: 4242, endTid: 4243,
                        milestones: [.init(name: "parsed", at: at(10), tid: 4242), .init(name: "laid out", at: at(30), tid: 4243)]),
            ProfileSpan(name: "request", begin: at(70), end: nil, beginTid: 4243, endTid: nil),
        ]
        let requests = try Self.parse(OTLPExport.text(ViewInput([profile]), options: options))
        let spans = requests.flatMap(\.spans)
        XCTAssertEqual(Set(spans.map(\.spanID)).count, spans.count, "span ids are unique")
        let process = try XCTUnwrap(spans.first { $0.name == "app" })
        XCTAssertEqual(Self.offsetMs(process.end), 120, "the process span covers the spans")
        let open = try XCTUnwrap(spans.first { $0.name == "open" })
        let request = try XCTUnwrap(spans.first { $0.name == "request" })
        XCTAssertEqual([open.parentID, request.parentID], [process.spanID, process.spanID])
        XCTAssertEqual([Self.offsetMs(open.start), Self.offsetMs(open.end)], [5, 45])
        XCTAssertEqual([Self.offsetMs(request.start), Self.offsetMs(request.end)], [70, 120])
        XCTAssertEqual(open.attributes["calltrace.span"] as? Bool, true)
        XCTAssertEqual(open.attributes["calltrace.span.extra"] as? String, "path=a")
        XCTAssertEqual(open.attributes["calltrace.span.begin_thread.id"] as? Int, 4242)
        XCTAssertEqual(open.attributes["calltrace.span.end_thread.id"] as? Int, 4243)
        XCTAssertNil(open.attributes["calltrace.unfinished"])
        XCTAssertEqual(open.events.map { "\($0.name) \(Self.offsetMs($0.time)) \($0.attributes["thread.id"] as? Int ?? -1)" },
                       ["parsed 10 4242", "laid out 30 4243"])
        XCTAssertEqual(request.attributes["calltrace.unfinished"] as? Bool, true)
        XCTAssertNil(request.attributes["calltrace.span.end_thread.id"])
        XCTAssertNil(request.attributes["calltrace.span.extra"])
        XCTAssertEqual(request.events.count, 0)

        profile.spans = []
        XCTAssertEqual(OTLPExport.text(ViewInput([profile]), options: options), plain, "without spans, the output is as before")
    }

    /// A line is one request: with two spans a request, six spans are three lines, each with the
    /// resource, and together the same spans in the same order as one line holds.
    func testBigProfilesSplitIntoRequestsOfBoundedSize() throws {
        let profile = try profile()
        let whole = ByteOutput.text { OTLPExport.render(ViewInput([profile]), options: options, to: $0) }
        let split = ByteOutput.text {
            OTLPExport.render(ViewInput([profile]), options: options, to: $0, spansPerRequest: 2)
        }
        let lines = split.split(separator: "\n")
        XCTAssertEqual(lines.count, 3, split)
        XCTAssertEqual(whole.split(separator: "\n").count, 1)
        func spans(_ line: Substring) throws -> [[String: Any]] {
            let request = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let resourceSpans = try XCTUnwrap(request["resourceSpans"] as? [[String: Any]])
            XCTAssertNotNil(resourceSpans.first?["resource"], "every request names its resource")
            let scopeSpans = try XCTUnwrap(resourceSpans.first?["scopeSpans"] as? [[String: Any]])
            return try XCTUnwrap(scopeSpans.first?["spans"] as? [[String: Any]])
        }
        let splitSpans = try lines.flatMap { try spans($0) }
        XCTAssertTrue(try lines.allSatisfy { try spans($0).count == 2 })
        let wholeSpans = try spans(Substring(whole.dropLast()))
        XCTAssertEqual(splitSpans.map { $0["spanId"] as? String }, wholeSpans.map { $0["spanId"] as? String })
    }

    /// Exporting again gives the same bytes (the same ids); another run, another trace id.
    func testTraceIDsAreStablePerRun() throws {
        let first = OTLPExport.text(ViewInput([try profile()]), options: options)
        XCTAssertEqual(first, OTLPExport.text(ViewInput([try profile()]), options: options))
        let other = OTLPExport.text(ViewInput([try profile(pid: 4343)]), options: options)
        XCTAssertNotEqual(try Self.traceIDs(first), try Self.traceIDs(other))
    }

    // MARK: - Through the CLI

    /// marks.c: main's frames, a worker thread, marks on both; exported to a file through the CLI.
    func testRealProgramExportsNestedSpansWithSourceLinesAndWallTimes() throws {
        let (trace, before) = try recordMarks()
        let out = trace.deletingPathExtension().appendingPathExtension("otlp.jsonl")
        let result = try calltrace(["export", trace.path, "--format", "otlp", "-o", out.path])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertEqual(result.stdout, "")
        let requests = try Self.parse(try String(contentsOf: out, encoding: .utf8))
        try checkMarksExport(requests, recordedAfter: before)
    }

    /// The push posts each line, as the file holds it, to /v1/traces of a URL without a path; the
    /// receiver parses each body with the official protos.
    func testPushPostsTheSameRequestsAsTheFile() throws {
        let (trace, before) = try recordMarks()
        let receiver = try Receiver(.accept)
        defer { receiver.stop() }
        let out = trace.deletingPathExtension().appendingPathExtension("otlp.jsonl")
        let result = try calltrace(["export", trace.path, "--format", "otlp", "--endpoint",
                                    "http://127.0.0.1:\(receiver.port)", "-o", out.path])
        XCTAssertEqual(result.status, 0, result.description)
        let file = try String(contentsOf: out, encoding: .utf8)
        let received = try receiver.received()
        XCTAssertEqual(received.map(\.path), Array(repeating: "/v1/traces", count: received.count))
        XCTAssertTrue(received.allSatisfy { $0.contentType == "application/json" }, "\(received.map(\.contentType))")
        XCTAssertEqual(received.map { $0.body + "\n" }.joined(), file, "the bodies are the file's lines")
        XCTAssertTrue(result.stderr.contains("posted \(received.count) request"), result.stderr)
        try checkMarksExport(try Self.parse(file), recordedAfter: before)

        // Without -o nothing goes to stdout; a URL with a path is used as it is.
        let again = try calltrace(["export", trace.path, "--format", "otlp", "--endpoint",
                                   "http://127.0.0.1:\(receiver.port)/custom/traces"])
        XCTAssertEqual(again.status, 0, again.description)
        XCTAssertEqual(again.stdout, "")
        XCTAssertEqual(try receiver.received().last?.path, "/custom/traces")
    }

    /// A refused connection and a 500 each end the export with one line and a non-zero status,
    /// promptly.
    func testPushFailuresAreOneLineErrors() throws {
        let (trace, _) = try recordMarks()
        let refused = try calltrace(["export", trace.path, "--format", "otlp", "--endpoint",
                                     "http://127.0.0.1:\(try Self.unusedPort())"])
        XCTAssertFalse(refused.timedOut, refused.description)
        XCTAssertNotEqual(refused.status, 0, refused.description)
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.description)
        XCTAssertTrue(refused.stderr.contains("calltrace: error: http://127.0.0.1:") && refused.stderr.contains("connect"),
                      refused.description)

        let receiver = try Receiver(.fail)
        defer { receiver.stop() }
        let failed = try calltrace(["export", trace.path, "--format", "otlp", "--endpoint",
                                    "http://127.0.0.1:\(receiver.port)/v1/traces"])
        XCTAssertFalse(failed.timedOut, failed.description)
        XCTAssertNotEqual(failed.status, 0, failed.description)
        XCTAssertEqual(failed.stderr.split(separator: "\n").count, 1, failed.description)
        XCTAssertTrue(failed.stderr.contains("HTTP 500: collector exploded second line"), failed.description)

        let chrome = try calltrace(["export", trace.path, "--format", "chrome", "--endpoint", "http://127.0.0.1:1"])
        XCTAssertNotEqual(chrome.status, 0, chrome.description)
        XCTAssertTrue(chrome.stderr.contains("--endpoint posts OTLP: use it with --format otlp"), chrome.description)
        let ftp = try calltrace(["export", trace.path, "--format", "otlp", "--endpoint", "ftp://127.0.0.1"])
        XCTAssertNotEqual(ftp.status, 0, ftp.description)
        XCTAssertEqual(ftp.stderr.split(separator: "\n").count, 1, ftp.description)
        XCTAssertTrue(ftp.stderr.contains("not an http:// URL"), ftp.description)
        let https = try calltrace(["export", trace.path, "--format", "otlp", "--endpoint", "https://127.0.0.1:1"])
        XCTAssertNotEqual(https.status, 0, https.description)
        XCTAssertEqual(https.stderr.split(separator: "\n").count, 1, https.description)
        XCTAssertTrue(https.stderr.contains("https is not supported"), https.description)
    }

    /// An answer framed wrongly (negative lengths, a chunk size that would overflow) is an answer
    /// like another or an error line, never a trap; so is a port out of range, and an IPv6 literal
    /// is an address.
    func testBadlyFramedAnswersAndURLsNeverTrap() throws {
        let (trace, _) = try recordMarks()
        let receiver = try Receiver(.garbled)
        defer { receiver.stop() }
        for _ in 0..<3 {
            let result = try calltrace(["export", trace.path, "--format", "otlp", "--endpoint",
                                        "http://127.0.0.1:\(receiver.port)"])
            XCTAssertFalse(result.timedOut, result.description)
            XCTAssertTrue(result.status == 0 || result.status == 1, "no trap: \(result)")
            XCTAssertNil(result.signal, result.description)
        }
        let port = try calltrace(["export", trace.path, "--format", "otlp", "--endpoint", "http://127.0.0.1:99999"])
        XCTAssertEqual(port.status, 1, port.description)
        XCTAssertTrue(port.stderr.contains("port 99999 is not between 1 and 65535"), port.description)
        let ipv6 = try calltrace(["export", trace.path, "--format", "otlp", "--endpoint",
                                  "http://[::1]:\(try Self.unusedPort())"])
        XCTAssertEqual(ipv6.status, 1, ipv6.description)
        XCTAssertFalse(ipv6.stderr.contains("unknown host"), ipv6.description)
        XCTAssertTrue(ipv6.stderr.contains("http://[::1]:"), ipv6.description)
    }

    /// Spans the receiver reports rejected (OTLP's partial success, here in a chunked answer) are
    /// a warning; the export succeeds.
    func testRejectedSpansAreAWarning() throws {
        let (trace, _) = try recordMarks()
        let receiver = try Receiver(.partial)
        defer { receiver.stop() }
        let result = try calltrace(["export", trace.path, "--format", "otlp", "--endpoint",
                                    "http://127.0.0.1:\(receiver.port)"])
        XCTAssertFalse(result.timedOut, result.description)
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertTrue(result.stderr.contains("calltrace: warning: http://127.0.0.1:\(receiver.port)/v1/traces: the receiver "
                                             + "rejected 3 spans: spans too old"), result.description)
        XCTAssertEqual(try receiver.received().count, 1)
    }

    // MARK: - Helpers


    /// marks.c recorded on every thread (calls of 1 ms or more), and the unix time just before it
    /// ran, less 50 ms: the process's start comes from /proc in clock ticks (10 ms).
    private func recordMarks() throws -> (URL, UInt64) {
        let fixture = try Fixture.build(["marks.c"], compiler: .gcc)
        let before = Self.unixNow() - 50 * Self.ms
        let (run, url) = try fixture.run(environment: ["CALLTRACE_THRESHOLD": "1ms", "CALLTRACE_THREADS": "all"])
        XCTAssertEqual(run.status, 0, run.description)
        return (url, before)
    }

    private func checkMarksExport(_ requests: [Request], recordedAfter before: UInt64,
                                  file: StaticString = #filePath, line: UInt = #line) throws {
        let spans = requests.flatMap(\.spans)
        let context = spans.map { "\($0.name) \($0.spanID) < \($0.parentID)" }.joined(separator: "\n")
        let byID = Dictionary(spans.map { ($0.spanID, $0) }, uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(byID.count, spans.count, "unique span ids", file: file, line: line)
        XCTAssertEqual(Set(spans.map(\.traceID)).count, 1, "one trace", file: file, line: line)
        let resource = try XCTUnwrap(requests.first?.resource)
        XCTAssertEqual(resource["service.name"] as? String, "marks", file: file, line: line)
        XCTAssertEqual(resource["host.name"] as? String, try Self.hostName(), file: file, line: line)
        XCTAssertTrue((resource["process.executable.path"] as? String ?? "").hasSuffix("/marks"), file: file, line: line)
        let after = Self.unixNow()
        for span in spans {
            XCTAssertTrue(span.parentID.isEmpty || byID[span.parentID] != nil, "\(span.name)'s parent is in the trace",
                          file: file, line: line)
            XCTAssertTrue(before <= span.start && span.start <= span.end && span.end <= after,
                          "\(span.name): [\(span.start), \(span.end)] within the run [\(before), \(after)]",
                          file: file, line: line)
            if let parent = byID[span.parentID] {
                XCTAssertTrue(parent.start <= span.start && span.end <= parent.end, "\(span.name) inside \(parent.name)",
                              file: file, line: line)
            }
        }
        func parentName(_ span: Span) -> String? { byID[span.parentID]?.name }
        let frames = spans.filter { $0.name == "do_frame" }
        XCTAssertEqual(frames.count, 20, context, file: file, line: line)
        XCTAssertTrue(frames.allSatisfy { parentName($0) == "main" }, context, file: file, line: line)
        XCTAssertTrue(frames.allSatisfy { ($0.attributes["code.file.path"] as? String ?? "").hasSuffix("marks.c") },
                      "\(frames.first?.attributes ?? [:])", file: file, line: line)
        XCTAssertGreaterThan(frames.first?.attributes["code.line.number"] as? Int ?? 0, 0, file: file, line: line)
        let main = try XCTUnwrap(spans.first { $0.name == "main" }, context, file: file, line: line)
        let worker = try XCTUnwrap(spans.first { $0.name == "worker" }, context, file: file, line: line)
        XCTAssertNotEqual(main.attributes["thread.id"] as? Int, worker.attributes["thread.id"] as? Int,
                          file: file, line: line)
        XCTAssertEqual(spans.first { $0.name == "ready" }.flatMap(parentName), "main", context, file: file, line: line)
        XCTAssertEqual(spans.first { $0.name == "worker start" }.flatMap(parentName), "worker", context,
                       file: file, line: line)
    }

    /// The host's name as `uname -n` prints it.
    private static func hostName() throws -> String {
        let result = try Command.run(try which("uname"), ["-n"], timeout: 60)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func unixNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    private static func offsetMs(_ unix: UInt64) -> Int64 { (Int64(bitPattern: unix &- unixStart)) / Int64(ms) }

    private static func traceIDs(_ text: String) throws -> Set<String> {
        let pattern = try NSRegularExpression(pattern: "\"traceId\":\"([0-9a-f]{32})\"")
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } })
    }

    /// A port nothing listens on: bound, then closed.
    private static func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw XCTSkip("no socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else { throw XCTSkip("cannot bind a local port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: - Parsing with the official definitions

    struct Span {
        var traceID: String
        var spanID: String
        var parentID: String
        var name: String
        var kind: Int
        var start: UInt64
        var end: UInt64
        var attributes: [String: Any]
        /// (name, unix time, attributes)
        var events: [(name: String, time: UInt64, attributes: [String: Any])] = []
    }

    struct Request {
        var resource: [String: Any]
        var scope: String
        var spans: [Span]
    }

    /// OTLP/JSON differs from protobuf's JSON mapping in one thing: trace and span ids are hex,
    /// not base64. Each line's ids are checked to be lowercase hex of 16 and 8 bytes and turned
    /// into base64, then the line is parsed strictly (unknown fields and wrong types fail) into
    /// ExportTraceServiceRequest. Ids come back as hex, times as strings (uint64).
    static let protoFunctions = #"""
    import base64, json, re
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    def to_proto(line):
        document = json.loads(line)
        for resource_spans in document["resourceSpans"]:
            for scope_spans in resource_spans["scopeSpans"]:
                for span in scope_spans["spans"]:
                    for key, size in (("traceId", 16), ("spanId", 8), ("parentSpanId", 8)):
                        if key in span:
                            assert re.fullmatch("[0-9a-f]{%d}" % (2 * size), span[key]), (key, span[key])
                            span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        return json_format.ParseDict(document, ExportTraceServiceRequest())

    def value(any_value):
        kind = any_value.WhichOneof("value")
        if kind == "array_value":
            return [value(v) for v in any_value.array_value.values]
        return getattr(any_value, kind)

    def attributes(attrs):
        return {a.key: value(a.value) for a in attrs}

    def summary(request):
        out = []
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                out.append({
                    "resource": attributes(resource_spans.resource.attributes),
                    "scope": scope_spans.scope.name + " " + scope_spans.scope.version,
                    "spans": [{
                        "traceId": s.trace_id.hex(), "spanId": s.span_id.hex(), "parentSpanId": s.parent_span_id.hex(),
                        "name": s.name, "kind": s.kind, "start": str(s.start_time_unix_nano),
                        "end": str(s.end_time_unix_nano), "attributes": attributes(s.attributes),
                        "events": [{"name": e.name, "time": str(e.time_unix_nano), "attributes": attributes(e.attributes)}
                                   for e in s.events],
                    } for s in scope_spans.spans],
                })
        return out
    """#

    private static func parse(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [Request] {
        let script = protoFunctions + #"""

        import sys
        result = []
        for line in sys.stdin:
            if line.strip():
                result.extend(summary(to_proto(line)))
        print(json.dumps(result))
        """#
        let result = try PythonVenv.run(script, packages: packages, stdin: text, file: file, line: line)
        guard result.status == 0 else {
            XCTFail("the official protos reject the export:\n\(result)\n\(text.prefix(2000))", file: file, line: line)
            return []
        }
        let decoded = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]],
                                    file: file, line: line)
        return decoded.map { request in
            let spans = (request["spans"] as? [[String: Any]] ?? []).map { span in
                Span(traceID: span["traceId"] as? String ?? "", spanID: span["spanId"] as? String ?? "",
                     parentID: span["parentSpanId"] as? String ?? "", name: span["name"] as? String ?? "",
                     kind: span["kind"] as? Int ?? -1, start: UInt64(span["start"] as? String ?? "") ?? 0,
                     end: UInt64(span["end"] as? String ?? "") ?? 0, attributes: span["attributes"] as? [String: Any] ?? [:],
                     events: (span["events"] as? [[String: Any]] ?? []).map { event in
                         (event["name"] as? String ?? "", UInt64(event["time"] as? String ?? "") ?? 0,
                          event["attributes"] as? [String: Any] ?? [:])
                     })
            }
            return Request(resource: request["resource"] as? [String: Any] ?? [:], scope: request["scope"] as? String ?? "",
                           spans: spans)
        }
    }

    /// An OTLP/HTTP receiver on 127.0.0.1 (a port of its own): Python's http.server in the venv,
    /// answering each POST as `mode` says; a 200 only after the body parsed with the official
    /// protos. It keeps each accepted body, its path and its Content-Type.
    final class Receiver {
        let port: Int
        private let process: Process
        private let directory: URL

        struct Post {
            var path: String
            var contentType: String
            var body: String
        }

        enum Mode: String {
            /// 200 with an empty partial success.
            case accept
            /// 500 with a two-line body.
            case fail
            /// 200 in chunks, saying 3 spans were rejected.
            case partial
            /// Answers framed wrongly, by turns: a negative Content-Length, a chunk size near
            /// Int.max, a negative chunk size.
            case garbled
        }

        init(_ mode: Mode) throws {
            directory = Workspace.directory("otlp-receiver-\(UUID().uuidString.prefix(8))")
            let python = try PythonVenv.python(with: OTLPExportTests.packages)
            let script = directory.appendingPathComponent("receiver.py")
            try (OTLPExportTests.protoFunctions + #"""

            import http.server, os, sys
            directory, mode = sys.argv[1], sys.argv[2]
            received = 0

            class Handler(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"

                def reply(self, status, body):
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json" if status == 200 else "text/plain")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

                def do_POST(self):
                    global received
                    body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                    if mode == "fail":
                        return self.reply(500, b"collector exploded\nsecond line")
                    if mode == "garbled":
                        received += 1
                        heads = [b"Content-Length: -1\r\n\r\n",
                                 b"Transfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nab\r\n0\r\n\r\n",
                                 b"Transfer-Encoding: chunked\r\n\r\n-5\r\nabc\r\n0\r\n\r\n"]
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n" + heads[(received - 1) % 3])
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    try:
                        to_proto(body)
                    except Exception as error:
                        return self.reply(400, repr(error).encode())
                    received += 1
                    name = os.path.join(directory, "%05d" % received)
                    with open(name + ".body", "wb") as f:
                        f.write(body)
                    with open(name + ".meta", "w") as f:
                        json.dump({"path": self.path, "contentType": self.headers.get("Content-Type", "")}, f)
                    if mode == "partial":
                        answer = b'{"partialSuccess":{"rejectedSpans":"3","errorMessage":"spans too old"}}'
                        self.send_response(200)
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        for piece in (answer[:20], answer[20:]):
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.write(b"0\r\n\r\n")
                        return
                    self.reply(200, b'{"partialSuccess":{}}')

                def log_message(self, *args):
                    pass

            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            with open(os.path.join(directory, "port.tmp"), "w") as f:
                f.write(str(server.server_address[1]))
            os.rename(os.path.join(directory, "port.tmp"), os.path.join(directory, "port"))
            server.serve_forever()
            """#).write(to: script, atomically: true, encoding: .utf8)
            process = Process()
            process.executableURL = python
            process.arguments = [script.path, directory.path, mode.rawValue]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let portFile = directory.appendingPathComponent("port")
            let deadline = Date().addingTimeInterval(120)
            while !FileManager.default.fileExists(atPath: portFile.path) {
                guard process.isRunning, Date() < deadline else {
                    process.terminate()
                    throw PythonVenvError("the OTLP receiver did not start")
                }
                usleep(50_000)
            }
            port = Int(try String(contentsOf: portFile, encoding: .utf8)) ?? 0
        }

        /// The accepted posts, in order.
        func received() throws -> [Post] {
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasSuffix(".body") }.sorted()
            return try names.map { name in
                let base = directory.appendingPathComponent(String(name.dropLast(".body".count)))
                let meta = try XCTUnwrap(try JSONSerialization.jsonObject(
                    with: Data(contentsOf: base.appendingPathExtension("meta"))) as? [String: Any])
                return Post(path: meta["path"] as? String ?? "", contentType: meta["contentType"] as? String ?? "",
                            body: try String(contentsOf: base.appendingPathExtension("body"), encoding: .utf8))
            }
        }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
    }
}
