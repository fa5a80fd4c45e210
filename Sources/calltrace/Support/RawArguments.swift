import ArgumentParser
import CalltraceKit
import Glibc

/// The command line as the kernel gave it: bytes. `CommandLine.arguments` (what the argument
/// parser reads) decodes each argument as UTF-8 and replaces the bytes that are not with U+FFFD,
/// which loses a path such as `dir\xff/app.trace`; paths and the recorded program's arguments are
/// taken from here instead.
enum RawArguments {
    static let all: [[UInt8]] = (0..<Int(CommandLine.argc)).map { index in
        guard let argument = CommandLine.unsafeArgv[index] else { return [] }
        return Array(UnsafeRawBufferPointer(start: argument, count: strlen(argument)))
    }

    /// The bytes the parser decoded into `argument`: the argument itself, or the value at the end
    /// of one (`--output=VALUE`, `-oVALUE`). An argument that decoded without a replacement was
    /// valid UTF-8, and is its own bytes.
    static func bytes(of argument: String) -> [UInt8] {
        guard argument.unicodeScalars.contains("\u{FFFD}") else { return Array(argument.utf8) }
        for raw in all {
            for start in raw.indices where String(decoding: raw[start...], as: UTF8.self) == argument {
                return Array(raw[start...])
            }
        }
        return Array(argument.utf8)
    }
}

/// Path options and arguments are parsed as bytes (`RawArguments`).
extension FilePath: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(bytes: RawArguments.bytes(of: argument))
    }

    public var defaultValueDescription: String { description }
}
