import Foundation
import Glibc

/// Posts OTLP/JSON requests (`export --format otlp` lines) to an OTLP/HTTP receiver: an
/// OpenTelemetry Collector, Jaeger, Tempo. One POST a request over its own connection
/// (HTTP/1.1, `Connection: close`), waiting for each answer; no retries: any failure ends the
/// export with one line naming it.
///
/// A small client over a socket rather than URLSession: FoundationNetworking needs libcurl, which
/// the statically linked CLI (`Scripts/install`) would then need at every start. Plain http only.
struct OTLPPush {
    /// Where the requests go, for messages.
    let url: String
    let host: String
    let port: String
    /// Path and query.
    let target: String
    /// Seconds to wait for the connection and for each answer.
    let timeout: Int

    init(endpoint: String, timeout: Int = 30) throws {
        guard let components = URLComponents(string: endpoint), let scheme = components.scheme?.lowercased(),
              var host = components.host, !host.isEmpty
        else {
            throw CalltraceError("--endpoint '\(endpoint)': not an http:// URL (such as http://localhost:4318)")
        }
        if scheme == "https" {
            throw CalltraceError("--endpoint '\(endpoint)': https is not supported; post to http:// (a local "
                                 + "OpenTelemetry Collector can forward over TLS)")
        }
        guard scheme == "http" else {
            throw CalltraceError("--endpoint '\(endpoint)': not an http:// URL (such as http://localhost:4318)")
        }
        // An IPv6 literal comes with its brackets ([::1]); getaddrinfo wants the address alone.
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if let port = components.port, !(1...65535).contains(port) {
            throw CalltraceError("--endpoint '\(endpoint)': port \(port) is not between 1 and 65535")
        }
        let path = Self.tracesPath(components.percentEncodedPath)
        self.host = host
        port = components.port.map(String.init) ?? "80"
        target = path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        let hostPart = host.contains(":") ? "[\(host)]" : host
        url = "http://\(hostPart)" + (components.port.map { ":\($0)" } ?? "") + target
        self.timeout = timeout
    }

    /// `/v1/traces` for a URL without a path (as OTLP/HTTP exporters do with
    /// OTEL_EXPORTER_OTLP_ENDPOINT), else the URL's path as it is (as with
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
    static func tracesPath(_ path: String) -> String {
        path.isEmpty || path == "/" ? "/v1/traces" : path
    }

    /// Posts one request; throws a one-line error on a connection failure, a timeout or an answer
    /// other than 2xx. Spans the receiver says it rejected (OTLP's partial success) are a warning.
    func post(_ body: Data) throws {
        let socket = try connect()
        defer { close(socket) }
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let head = "POST \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: calltrace/\(CalltraceVersion.current)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        // A receiver may answer (413, 500) and close before reading the whole body: read the answer
        // even when sending failed.
        let sendError = send(Data(head.utf8), to: socket) ?? send(body, to: socket)
        let answer: HTTPAnswer
        do {
            answer = try receive(from: socket)
        } catch let error as CalltraceError {
            if let sendError { throw CalltraceError("\(url): cannot send: \(String(cString: strerror(sendError)))") }
            throw error
        }
        guard (200..<300).contains(answer.status) else {
            let snippet = Self.snippet(answer.body)
            throw CalltraceError("\(url): HTTP \(answer.status)" + (snippet.isEmpty ? "" : ": \(snippet)"))
        }
        if let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
           let partial = object["partialSuccess"] as? [String: Any] {
            let rejected = Int("\(partial["rejectedSpans"] ?? 0)") ?? 0
            if rejected > 0 {
                let message = partial["errorMessage"] as? String ?? ""
                Diagnostics.warning("\(url): the receiver rejected \(rejected) spans" + (message.isEmpty ? "" : ": \(message)"))
            }
        }
    }

    // MARK: - Connection

    /// A connected socket to the first of the host's addresses that answers within the timeout.
    private func connect() throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, port, &hints, &list)
        guard status == 0, let first = list else {
            throw CalltraceError("\(url): unknown host '\(host)' (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(first) }
        var lastError: Int32 = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                            address.pointee.ai_protocol)
            if fd < 0 { lastError = errno; continue }
            if let error = connect(fd, to: address.pointee) {
                lastError = error
                close(fd)
                continue
            }
            var wait = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            return fd
        }
        if lastError == ETIMEDOUT { throw CalltraceError("\(url): cannot connect within \(timeout) s") }
        throw CalltraceError("\(url): cannot connect: \(String(cString: strerror(lastError)))")
    }

    /// Connects `fd` without blocking longer than the timeout; the errno on failure.
    private func connect(_ fd: Int32, to address: addrinfo) -> Int32? {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        if Glibc.connect(fd, address.ai_addr, address.ai_addrlen) == 0 { return nil }
        guard errno == EINPROGRESS else { return errno }
        var poll = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        var ready: Int32
        repeat { ready = Glibc.poll(&poll, 1, Int32(timeout * 1000)) } while ready < 0 && errno == EINTR
        if ready == 0 { return ETIMEDOUT }
        if ready < 0 { return errno }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error == 0 ? nil : error
    }

    /// Sends all of `data`; the errno on failure (never SIGPIPE).
    private func send(_ data: Data, to fd: Int32) -> Int32? {
        data.withUnsafeBytes { bytes -> Int32? in
            var offset = 0
            while offset < bytes.count, let base = bytes.baseAddress {
                let sent = Glibc.send(fd, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 && errno == EINTR { continue }
                if sent < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno }
                offset += sent
            }
            return nil
        }
    }

    // MARK: - Answer

    private struct HTTPAnswer {
        var status: Int
        var body: Data
    }

    /// Reads the answer until the receiver closes (or its Content-Length is in), keeping at most
    /// 1 MiB; interim 1xx answers are skipped.
    private func receive(from fd: Int32) throws -> HTTPAnswer {
        var bytes = Data()
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            if let answer = Self.parse(bytes, complete: false) { return answer }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw CalltraceError("\(url): no answer within \(timeout) s")
            }
            if count < 0 { throw CalltraceError("\(url): no answer: \(String(cString: strerror(errno)))") }
            if count == 0 || bytes.count >= 1 << 20 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        guard let answer = Self.parse(bytes, complete: true) else {
            throw CalltraceError("\(url): " + (bytes.isEmpty ? "the receiver closed the connection without answering"
                                               : "the answer is not HTTP"))
        }
        return answer
    }

    /// The final answer in `bytes`, or nil when more is needed (`complete`: the connection ended).
    private static func parse(_ bytes: Data, complete: Bool) -> HTTPAnswer? {
        var rest = bytes[...]
        while true {
            guard let end = rest.range(of: Data("\r\n\r\n".utf8)) else { return nil }
            let head = String(decoding: rest[..<end.lowerBound], as: UTF8.self)
            let lines = head.components(separatedBy: "\r\n")
            let statusLine = lines[0].split(separator: " ")
            guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
                return nil
            }
            rest = rest[end.upperBound...]
            if (100..<200).contains(status) { continue }
            // No body, whatever the headers say (RFC 9112, 6.3).
            if status == 204 || status == 304 { return HTTPAnswer(status: status, body: Data()) }
            var length: Int?
            var chunked = false
            for line in lines.dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let name = parts[0].lowercased(), value = parts[1].trimmingCharacters(in: .whitespaces)
                if name == "content-length" { length = Int(value).flatMap { $0 >= 0 ? $0 : nil } }
                if name == "transfer-encoding" && value.lowercased().contains("chunked") { chunked = true }
            }
            if chunked {
                guard let body = dechunk(rest) else { return complete ? HTTPAnswer(status: status, body: Data(rest)) : nil }
                return HTTPAnswer(status: status, body: body)
            }
            if let length {
                if rest.count >= length { return HTTPAnswer(status: status, body: Data(rest.prefix(length))) }
                return complete ? HTTPAnswer(status: status, body: Data(rest)) : nil
            }
            return complete ? HTTPAnswer(status: status, body: Data(rest)) : nil
        }
    }

    /// A chunked body, or nil until its last chunk is in.
    private static func dechunk(_ data: Data.SubSequence) -> Data? {
        var body = Data()
        var rest = data
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else { return nil }
            if size == 0 { return body }
            let start = lineEnd.upperBound
            // Compared without adding to `size`: a crafted size near Int.max must not overflow.
            let available = rest.distance(from: start, to: rest.endIndex)
            guard available >= 2, size <= available - 2 else { return nil }
            let end = rest.index(start, offsetBy: size)
            body.append(rest[start..<end])
            rest = rest[rest.index(end, offsetBy: 2)...]
        }
        return nil
    }

    /// The start of an answer's body on one line.
    private static func snippet(_ data: Data) -> String {
        let text = String(decoding: data.prefix(300), as: UTF8.self)
        let line = text.split(whereSeparator: { $0.isNewline }).joined(separator: " ")
        return line.trimmingCharacters(in: .whitespaces) + (data.count > 300 ? "..." : "")
    }
}
