import Foundation

/// How an object file or a program was instrumented, as the file says: a build with sleds holds the
/// compiler's table of them (an `xray_instr_map` section), a build with hooks calls them (undefined
/// references to `__cyg_profile_func_enter`).
enum Instrumentation {
    /// Whether `file` carries `compiler`'s instrumentation, and the tool output that says so.
    static func carries(_ file: URL, _ compiler: Compiler) throws -> (instrumented: Bool, evidence: String) {
        if compiler.hooks {
            let symbols = try Command.run(try which("nm"), ["-u", file.path])
            return (symbols.stdout.contains("__cyg_profile_func_enter"), symbols.stdout)
        }
        let sections = try Command.run(try which("readelf"), ["-S", "-W", file.path])
        return (sections.stdout.contains("xray_instr_map"), sections.stdout)
    }
}
