import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Posts OTLP/JSON requests (`export --format otlp` lines) to an OTLP/HTTP receiver: an
/// OpenTelemetry Collector, Jaeger, Tempo. One POST a request, `application/json`, waiting for
/// each answer; no retries: any failure ends the export with one line naming it.
struct OTLPPush {
    let url: URL
    /// Seconds to wait for the connection and for each answer.
    let timeout: Double
    private let session: URLSession

    init(endpoint: String, timeout: Double = 30) throws {
        url = try Self.tracesURL(endpoint)
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 2
        session = URLSession(configuration: configuration)
    }

    /// The URL to post to: `endpoint` with `/v1/traces` appended when it has no path (as OTLP/HTTP
    /// exporters do with OTEL_EXPORTER_OTLP_ENDPOINT), else `endpoint` as it is (as with
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
    static func tracesURL(_ endpoint: String) throws -> URL {
        guard var components = URLComponents(string: endpoint),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty
        else {
            throw CalltraceError("--endpoint '\(endpoint)': not an http:// or https:// URL (such as http://localhost:4318)")
        }
        if components.path.isEmpty || components.path == "/" { components.path = "/v1/traces" }
        guard let url = components.url else { throw CalltraceError("--endpoint '\(endpoint)': not a valid URL") }
        return url
    }

    /// Posts one request; throws a one-line error on a connection failure, a timeout or an answer
    /// other than 2xx. Spans the receiver says it rejected (OTLP's partial success) are a warning.
    func post(_ body: Data) throws {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        let answer = Answer()
        let task = session.dataTask(with: request) { data, response, error in
            answer.set(data: data, response: response, error: error)
        }
        task.resume()
        // URLSession enforces the timeout; this is a backstop so that nothing can hang the export.
        guard answer.wait(seconds: timeout * 2 + 5) else {
            task.cancel()
            throw CalltraceError("\(url): no answer within \(Int(timeout)) s")
        }
        if let error = answer.error { throw CalltraceError("\(url): \(Self.describe(error))") }
        guard let http = answer.response as? HTTPURLResponse else {
            throw CalltraceError("\(url): the answer is not HTTP")
        }
        let data = answer.data ?? Data()
        guard (200..<300).contains(http.statusCode) else {
            let snippet = Self.snippet(data)
            throw CalltraceError("\(url): HTTP \(http.statusCode)" + (snippet.isEmpty ? "" : ": \(snippet)"))
        }
        if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
           let partial = object["partialSuccess"] as? [String: Any] {
            let rejected = Int("\(partial["rejectedSpans"] ?? 0)") ?? 0
            if rejected > 0 {
                let message = partial["errorMessage"] as? String ?? ""
                Diagnostics.warning("\(url): the receiver rejected \(rejected) spans" + (message.isEmpty ? "" : ": \(message)"))
            }
        }
    }

    /// The start of an answer's body on one line.
    private static func snippet(_ data: Data) -> String {
        let text = String(decoding: data.prefix(300), as: UTF8.self)
        let line = text.split(whereSeparator: { $0.isNewline }).joined(separator: " ")
        return line.trimmingCharacters(in: .whitespaces) + (data.count > 300 ? "..." : "")
    }

    private static func describe(_ error: Error) -> String {
        guard let error = error as? URLError else { return "\(error)" }
        switch error.code {
        case .cannotConnectToHost: return "cannot connect (connection refused?)"
        case .timedOut: return "timed out"
        case .cannotFindHost, .dnsLookupFailed: return "unknown host"
        case .networkConnectionLost: return "the connection was lost"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return "TLS failed (\(error.code.rawValue))"
        default: return "cannot post (URL error \(error.code.rawValue))"
        }
    }
}

/// One answer handed from URLSession's queue to the waiting export.
private final class Answer: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var stored: (data: Data?, response: URLResponse?, error: Error?) = (nil, nil, nil)

    func set(data: Data?, response: URLResponse?, error: Error?) {
        lock.lock()
        stored = (data, response, error)
        lock.unlock()
        done.signal()
    }

    /// False when no answer came in time.
    func wait(seconds: Double) -> Bool { done.wait(timeout: .now() + seconds) == .success }

    var data: Data? { lock.lock(); defer { lock.unlock() }; return stored.data }
    var response: URLResponse? { lock.lock(); defer { lock.unlock() }; return stored.response }
    var error: Error? { lock.lock(); defer { lock.unlock() }; return stored.error }
}
