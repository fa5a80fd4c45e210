@testable import CalltraceKit
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// Reads `trace` as `report` reads a file (`ProfileBuilder`, as the fuzz target does) and renders
/// it with every registered view (`info`'s too), and as each view that streams reads it, without
/// opening any module file: a damaged path may name anything. Each view renders into its own output; the profile and the report views must
/// hold every call the reader kept, every JSON format must parse, the SVG must be XML, and the
/// Perfetto trace must be well-formed protobuf with a slice per call. Throws the reader's
/// `TraceError` for bytes that are not a trace.
@discardableResult
func renderEverything(_ trace: [UInt8], options: ViewOptions = ViewOptions(),
                      file: StaticString = #filePath, line: UInt = #line) throws -> (trace: Trace, profile: Profile) {
    let (read, profile) = try ProfileBuilder.read(bytes: trace, makeSymbolicator: offlineSymbolicator)
    let calls = read.pieces.reduce(0) { $0 + $1.records.count }
    XCTAssertEqual(profile.callCount, calls, "the profile keeps every call", file: file, line: line)
    for view in ViewRegistry.all {
        var bytes: [UInt8] = []
        let output = ByteOutput { bytes.append(contentsOf: $0) }
        view.render(ViewInput([profile], baseline: [profile], traces: [read]), options: options, to: output)
        output.flush()
        let text = String(decoding: bytes, as: UTF8.self)
        // Lines by their newline bytes: split by Character, a name ending in "\r" (a crafted table's)
        // would join its line and the next into one "\r\n" grapheme.
        let textLines = bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        let label = "\(view.command) --format \(view.format)"
        // A view that streams writes, whenever its stream takes the trace, the bytes it writes
        // from the whole profile.
        if let streamed = try streamedText(view, trace, options: options, symbolicator: offlineSymbolicator) {
            XCTAssertEqual(streamed, text, "\(label), streamed", file: file, line: line)
        }
        switch (view.command, view.format) {
        case (.report, "tree"):
            let lines = textLines.filter { $0.contains(" ms|") }.count
            XCTAssertEqual(lines, calls, "\(label): one line per call:\n\(text.prefix(2000))", file: file, line: line)
        case (.report, "jsonl"):
            XCTAssertEqual(textLines.count, calls, "\(label): one line per call", file: file, line: line)
            for jsonLine in textLines.prefix(50) {
                XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(jsonLine.utf8)), label, file: file, line: line)
            }
        case (.report, "json"):
            let document = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            XCTAssertNotNil(document, "\(label): \(text.prefix(500))", file: file, line: line)
            let threads = document?["threads"] as? [[String: Any]] ?? []
            XCTAssertEqual(threads.reduce(0) { $0 + nestedCalls($1["calls"]) }, calls, label, file: file, line: line)
        case (.top, "json"):
            let document = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            XCTAssertNotNil(document, "\(label): \(text.prefix(500))", file: file, line: line)
            let functions = document?["functions"] as? [[String: Any]] ?? []
            XCTAssertEqual(functions.reduce(0) { $0 + ($1["calls"] as? Int ?? 0) }, calls, "\(label): every call counted",
                           file: file, line: line)
        case (.spans, "json"):
            let document = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            XCTAssertNotNil(document, "\(label): \(text.prefix(500))", file: file, line: line)
            let spans = document?["spans"] as? [[String: Any]] ?? []
            XCTAssertEqual(spans.reduce(0) { $0 + ($1["count"] as? Int ?? 0) + ($1["unfinished"] as? Int ?? 0) },
                           profile.spans.count, "\(label): every span counted", file: file, line: line)
        case (.flame, "svg"):
            let parser = XMLParser(data: Data(text.utf8))
            XCTAssertTrue(parser.parse(), "\(label): \(parser.parserError.map { "\($0)" } ?? ""): \(text.prefix(500))",
                          file: file, line: line)
        case (.export, "perfetto"):
            let slices = ProtobufWire.perfettoSlices(bytes)
            XCTAssertNotNil(slices, "\(label): not a well-formed protobuf trace", file: file, line: line)
            XCTAssertEqual(slices?.begins, slices?.ends, "\(label): every slice ends", file: file, line: line)
            XCTAssertEqual(slices?.calls, calls, "\(label): a slice per call", file: file, line: line)
        case (.export, "otlp"):
            // JSON lines, one request each; every call, every mark and the process are spans.
            let spans = textLines.map { jsonLine -> Int in
                let request = try? JSONSerialization.jsonObject(with: Data(jsonLine.utf8)) as? [String: Any]
                XCTAssertNotNil(request, "\(label): \(jsonLine.prefix(500))", file: file, line: line)
                let resourceSpans = request?["resourceSpans"] as? [[String: Any]] ?? []
                let scopeSpans = resourceSpans.first?["scopeSpans"] as? [[String: Any]] ?? []
                return (scopeSpans.first?["spans"] as? [Any] ?? []).count
            }
            XCTAssertEqual(spans.reduce(0, +), calls + profile.marks.count + 1, label, file: file, line: line)
        case (_, "json"):
            XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(text.utf8)), "\(label): \(text.prefix(500))",
                            file: file, line: line)
        default:
            break
        }
    }
    let info = InfoTextView.text(ViewInput([profile], traces: [read]))
    XCTAssertTrue(info.contains("records: ") && info.contains("\nthreads:\n"), info, file: file, line: line)
    return (read, profile)
}

private func nestedCalls(_ value: Any?) -> Int {
    guard let calls = value as? [[String: Any]] else { return 0 }
    return calls.reduce(calls.count) { $0 + nestedCalls($1["children"]) }
}

/// `export --format otlp` of a trace held in memory, made while it is read (`OTLPExportStream`,
/// symbolicated as `renderEverything` does); nil when the stream asked for a whole profile.
func streamedOTLP(_ trace: [UInt8], options: ViewOptions = ViewOptions(), spansPerRequest: Int) throws -> String? {
    let stream = try XCTUnwrap(OTLPExportStream(), "no temporary file")
    let (read, profile) = try ProfileBuilder.stream(bytes: trace, into: stream, makeSymbolicator: offlineSymbolicator)
    guard stream.finish(trace: read, profile: profile) else { return nil }
    var failure: Error?
    let text = ByteOutput.text { output in
        do {
            try stream.write(trace: read, profile: profile, options: options, to: output, spansPerRequest: spansPerRequest)
        } catch {
            failure = error
        }
    }
    if let failure { throw failure }
    return text
}

/// A symbolicator that opens no module file (a damaged trace's paths may name anything).
private func offlineSymbolicator(_ modules: [TraceModule]) -> Symbolicator {
    Symbolicator(modules: modules.map { module in
        var module = module
        module.path = "/nonexistent/calltrace-test/" + module.name
        return module
    }, warn: { _ in })
}
