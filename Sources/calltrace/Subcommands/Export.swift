import ArgumentParser
import CalltraceKit
import Foundation
import Glibc

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a trace in a format other tools read: Perfetto, Chrome's trace JSON, speedscope, folded stacks, OTLP, pprof.",
        discussion: """
            ui.perfetto.dev opens perfetto files, and chrome files as chrome://tracing does; \
            speedscope.app opens speedscope files; flamegraph.pl and inferno draw folded stacks. otlp \
            writes OpenTelemetry JSON lines, and with --endpoint posts them to a receiver's /v1/traces.

            Examples:
              calltrace export app.trace --format perfetto -o app.pftrace
              calltrace export app.trace --format chrome -o app.json
              calltrace export app.trace --format speedscope -o app.speedscope.json
              calltrace export app.trace --format folded | flamegraph.pl > app.svg
              calltrace export app.trace --format otlp -o app.otlp.jsonl
              calltrace export app.trace --format otlp --endpoint http://collector:4318
            """
    )

    @Argument(help: "The trace file written by `calltrace record`.")
    var file: FilePath

    @Option(help: ArgumentHelp("The format: \(ViewRegistry.help(of: .export)).", valueName: "format"))
    var format: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (replacing it) instead of standard output.",
                                                    valueName: "file"))
    var output: FilePath?

    @Option(help: ArgumentHelp("otlp: post each request (line) to this OTLP/HTTP receiver, such as "
                               + "http://localhost:4318 (http only; /v1/traces is appended to a URL without a path); with -o "
                               + "the file is written as well. Default: write only.", valueName: "url"))
    var endpoint: String?

    func validate() throws {
        try ViewSelection.check(format, command: .export)
        if endpoint != nil && format != OTLPExport.format {
            throw ValidationError("--endpoint posts OTLP: use it with --format otlp")
        }
    }

    func run() throws {
        try Diagnostics.run {
            let view = try ViewSelection.view(format, command: .export)
            let push = try endpoint.map { try OTLPPush(endpoint: $0) }
            var options = ViewOptions()
            options.hostName = Self.hostName()
            options.version = CalltraceVersion.current
            var posting = PostedLines(push: push)
            // Folded stacks and OTLP spans are made as the calls are read: memory stays flat.
            let run = try ViewRunner.run(view, of: file, lines: view.needsLines, options: options) { body in
                // Standard output, unless the requests are posted and no file is named.
                try OutputFile.write(format: view.format, isBinary: view.isBinary, to: output, standardOutput: push == nil,
                                     also: push == nil ? nil : { posting.add($0) }, body)
            }
            try posting.finish()
            TraceLoading.reportWarnings(of: run.trace)
        }
    }

    /// What `hostname` prints (gethostname: no DNS lookup, unlike Foundation's host name); nil if
    /// it fails.
    private static func hostName() -> String? {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return nil }
        return String(cString: name)
    }
}

/// The export's lines posted one by one as they are written (`--endpoint`): a line is one OTLP
/// request. The first failure stops the posting and is thrown by `finish`.
private struct PostedLines {
    let push: OTLPPush?
    private var line = Data()
    private var failure: Error?
    private(set) var posted = 0

    init(push: OTLPPush?) { self.push = push }

    mutating func add(_ chunk: UnsafeRawBufferPointer) {
        guard push != nil, failure == nil, let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var start = 0
        for index in 0..<chunk.count where base[index] == UInt8(ascii: "\n") {
            line.append(base + start, count: index - start)
            post()
            start = index + 1
            if failure != nil { return }
        }
        line.append(base + start, count: chunk.count - start)
    }

    /// Posts what is left and throws the first failure.
    mutating func finish() throws {
        guard let push else { return }
        if failure == nil && !line.isEmpty { post() }
        if let failure { throw failure }
        Diagnostics.note("posted \(posted) request\(posted == 1 ? "" : "s") to \(push.url)")
    }

    private mutating func post() {
        guard let push else { return }
        do {
            try push.post(line)
            posted += 1
        } catch {
            failure = error
        }
        line.removeAll(keepingCapacity: true)
    }
}
