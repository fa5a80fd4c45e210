/// `report` (default): the call tree as text, one line per call (the MTHawkeye layout):
///
/// ```
///  0| 121.40 ms|main
///  1|  40.61 ms|  load_config
///  2|  12.11 ms|    parse_section
/// ```
///
/// The first column is the call's depth on its thread's stack as recorded; the indentation is its
/// depth among the calls shown. They differ when a call's parent was not recorded (dropped, or
/// nested deeper than `--max-depth`) or is left out (`--threshold`, `--hide-preempted`): the call
/// then sits under its nearest shown ancestor. With more than one thread with calls, each thread's
/// tree follows a `== thread TID "name" ==` heading, the main thread first.
///
/// A call that spent much of its time waiting for a CPU (`Preemption.isMarked`) ends in
/// `(preempted X ms)`. Under a call the main thread hung in (`CALLTRACE_HANG`), lines starting
/// `!` give the hang and its native stack. `--self` adds a column of self time after the cost. `--collapse` prints a
/// chain of calls, each the only recorded call of its parent and taking at least 95 % of its
/// time, as one line: `main > lua_pcallk > ... > luaV_execute`, with the first call's depth, cost
/// and preempted time (and the chain's self time), and the last call's `(unfinished)`/`(unwound)`.
/// `--lines` follows each name with the source file and line of the function's entry,
/// `main (app.c:12)`: the file's base name, or its path as DWARF gives it when two source files
/// of the profile share that base name.
public enum ReportTreeView: ProfileView {
    public static let command = ViewCommand.report
    public static let format = "tree"
    public static let summary = "indented call tree"

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        let threads = profile.threads.filter { $0.count > 0 }
        if !threads.isEmpty {
            for line in filterLines(profile) + mutedLines(profile) + uncertaintyLines(profile) { output.write(line + "\n") }
        }
        let names = NameArena(options.lines ? namesWithLines(profile.functions) : profile.functions.map(\.name))
        for (position, thread) in threads.enumerated() {
            if threads.count > 1 {
                if position > 0 { output.write(byte: 0x0A) }
                output.write(heading(thread) + "\n")
            }
            render(thread, profile: profile, names: names, options: options, to: output)
        }
    }

    /// Colours on a terminal (`ViewOptions.colour`). The cost is red from half of the thread's longest
    /// root call, yellow from a tenth (where the time goes, at a glance); the depth column and the
    /// `(unfinished)`-style notes are dim; hang lines are red.
    private struct Palette {
        let on: Bool
        static let dim = Array("\u{1B}[2m".utf8), yellow = Array("\u{1B}[33m".utf8)
        static let red = Array("\u{1B}[1;31m".utf8), reset = Array("\u{1B}[0m".utf8)

        func cost(_ total: Int64, of longest: Int64) -> [UInt8]? {
            guard on, longest > 0 else { return nil }
            return total * 2 >= longest ? Self.red : total * 10 >= longest ? Self.yellow : nil
        }
    }

    private static func render(_ thread: ProfileThread, profile: Profile, names: NameArena, options: ViewOptions,
                               to output: ByteOutput) {
        let filter = CallFilter(profile: profile, options: options)
        let hangs = HungCalls(profile: profile, thread: thread)
        let palette = Palette(on: options.colour)
        let longest = thread.roots.reduce(Int64(0)) { max($0, thread.cost(Int($1)).value) }
        // The tree depths of the shown ancestors of the call being visited: its indentation.
        var shownAbove: [Int] = []
        // A --collapse chain waiting for its last call.
        var chain: [Int] = []
        thread.forEachPreOrder { call, treeDepth in
            defer {
                if !hangs.isEmpty, chain.isEmpty {
                    writeHangs(hangs[thread, call], indent: shownAbove.count, palette: palette, to: output)
                }
            }
            while let last = shownAbove.last, last >= treeDepth { shownAbove.removeLast() }
            guard filter.shows(thread, call) else { return }
            let hasSuffix = thread.depthAndFlags[call] >> 24 != 0 || thread.costIsUncertain(call, measured: profile.measured)
            if options.collapse && !thread.flags(call).contains(.unfinished) && !thread.flags(call).contains(.unwound)
                && collapses(thread, call, filter: filter) {
                chain.append(call)
                return
            }
            let first = chain.first ?? call
            let indent = shownAbove.count
            shownAbove.append(treeDepth)
            // A chain's line: the last call's (unfinished)/(unwound), the first call's (preempted).
            let suffix = hasSuffix || first != call ? suffix(thread, call, preemptedOf: first, measured: profile.measured) : []
            if chain.isEmpty && !options.showSelf && !palette.on,
               writePlainLine(thread, call, name: names[Int(thread.function[call])], indent: indent, suffix: suffix,
                              to: output) {
                return
            }
            writeLine(thread, call, chain: chain, indent: indent, suffix: suffix, longest: longest, palette: palette,
                      showSelf: options.showSelf, names: names, to: output)
            chain.removeAll(keepingCapacity: true)
        }
    }

    /// The common line (no chain, no self time, no colour), formatted straight into the output
    /// buffer; false when the buffer had no room (then `writeLine` writes it).
    @inline(__always)
    private static func writePlainLine(_ thread: ProfileThread, _ call: Int, name: UnsafeBufferPointer<UInt8>, indent: Int,
                                       suffix: [UInt8], to output: ByteOutput) -> Bool {
        guard let line = output.reserve(64 + 2 * indent + name.count + suffix.count) else { return false }
        var n = ByteOutput.format(fixed: UInt64(thread.depth(call)), decimals: 0, width: 2, at: line)
        line[n] = UInt8(ascii: "|")
        n += 1
        n += ByteOutput.format(fixed: hundredths(thread.cost(call).value), decimals: 2, width: 7, at: line + n)
        line[n] = 0x20; line[n + 1] = UInt8(ascii: "m"); line[n + 2] = UInt8(ascii: "s"); line[n + 3] = UInt8(ascii: "|")
        n += 4
        (line + n).initialize(repeating: 0x20, count: 2 * indent)
        n += 2 * indent
        if let base = name.baseAddress { (line + n).update(from: base, count: name.count) }
        n += name.count
        for byte in suffix { line[n] = byte; n += 1 }
        line[n] = 0x0A
        output.commit(n + 1)
        return true
    }

    /// A line with what the plain one leaves out: a --collapse chain (`chain`, ending at `call`),
    /// self time, colours.
    private static func writeLine(_ thread: ProfileThread, _ call: Int, chain: [Int], indent: Int, suffix: [UInt8],
                                  longest: Int64, palette: Palette, showSelf: Bool, names: NameArena,
                                  to output: ByteOutput) {
        let first = chain.first ?? call
        if palette.on { output.write(Palette.dim) }
        output.write(UInt64(thread.depth(first)), width: 2)
        output.write(byte: UInt8(ascii: "|"))
        if palette.on { output.write(Palette.reset) }
        if let style = palette.cost(thread.cost(first).value, of: longest) {
            output.write(style)
            output.write(fixed: hundredths(thread.cost(first).value), decimals: 2, width: 7)
            output.write(Palette.reset)
            output.write(msBar)
        } else {
            writeMilliseconds(thread.cost(first).value, to: output)
        }
        if showSelf {
            let selfTime = chain.reduce(thread.selfTime(call)) { $0 + thread.selfTime($1) }
            writeMilliseconds(selfTime.value, to: output)
        }
        output.write(spaces: 2 * indent)
        if chain.isEmpty {
            output.write(names[Int(thread.function[call])])
        } else {
            writeChain(chain + [call], thread: thread, names: names, to: output)
        }
        if palette.on && !suffix.isEmpty {
            output.write(Palette.dim)
            output.write(suffix)
            output.write(Palette.reset)
        } else {
            output.write(suffix)
        }
        output.write(byte: 0x0A)
    }

    /// `name (file.c:12)`; a function without a known line keeps its bare name. A file is shown by
    /// its base name unless another file of these functions has the same one.
    static func namesWithLines(_ functions: [ProfileFunction]) -> [String] {
        func baseName(_ path: String) -> Substring { path.split(separator: "/").last ?? Substring(path) }
        var pathsByBaseName: [Substring: Set<String>] = [:]
        for case let file? in functions.map(\.file) { pathsByBaseName[baseName(file), default: []].insert(file) }
        return functions.map { function in
            guard let file = function.file, let line = function.line else { return function.name }
            let base = baseName(file)
            let shown = (pathsByBaseName[base]?.count ?? 0) > 1 ? file : String(base)
            return "\(function.name) (\(shown):\(line))"
        }
    }

    /// A hang's stack under the hung call, one column to the right of it.
    private static func writeHangs(_ lines: [[String]], indent: Int, palette: Palette, to output: ByteOutput) {
        for hang in lines {
            for line in hang {
                let text = "! " + line
                output.write("  |          |" + String(repeating: " ", count: 2 * indent)
                             + (palette.on ? "\u{1B}[31m" + text + "\u{1B}[0m" : text) + "\n")
            }
        }
    }

    /// Hundredths of a millisecond, rounded half up (`%7.2f` of milliseconds).
    @inline(__always)
    private static func hundredths(_ ns: Int64) -> UInt64 { (UInt64(max(ns, 0)) + 5_000) / 10_000 }

    /// `%7.2f ms|`.
    @inline(__always)
    private static func writeMilliseconds(_ ns: Int64, to output: ByteOutput) {
        output.write(fixed: hundredths(ns), decimals: 2, width: 7)
        output.write(msBar)
    }

    /// The call is the start or the middle of a --collapse chain: its one recorded child is shown
    /// and takes at least 95 % of its time.
    private static func collapses(_ thread: ProfileThread, _ call: Int, filter: CallFilter) -> Bool {
        let child = thread.firstChild[call]
        guard child >= 0, thread.nextSibling[Int(child)] < 0, filter.shows(thread, Int(child)) else { return false }
        return thread.cost(Int(child)).value * 20 >= thread.cost(call).value * 19
    }

    private static func writeChain(_ calls: [Int], thread: ProfileThread, names: NameArena, to output: ByteOutput) {
        let shown = calls.count > 4 ? [calls[0], calls[1], -1, calls[calls.count - 1]] : calls
        for (i, call) in shown.enumerated() {
            if i > 0 { output.write(chainSeparator) }
            if call < 0 { output.write(ellipsis) } else { output.write(names[Int(thread.function[call])]) }
        }
    }

    private static func suffix(_ thread: ProfileThread, _ call: Int, preemptedOf first: Int, measured: Bool) -> [UInt8] {
        let flags = thread.flags(call)
        let preempted = thread.preempted(first)
        var suffix = flags.contains(.unfinished) ? unfinished : flags.contains(.unwound) ? unwound : []
        if thread.costIsUncertain(first, measured: measured) {
            suffix += Array(" (±\(TextFormat.milliseconds(thread.costUncertainty(first))) ms)".utf8)
        }
        if Preemption.isMarked(cost: thread.cost(first), preempted: preempted) {
            suffix += Array(" (preempted \(TextFormat.milliseconds(preempted)) ms)".utf8)
        }
        if let split = thread.split(first) { suffix += Array(split.blockedMark(cost: thread.cost(first)).utf8) }
        return suffix
    }

    private static let msBar = Array(" ms|".utf8)
    private static let chainSeparator = Array(" > ".utf8)
    private static let ellipsis = Array("...".utf8)
    private static let unfinished = Array(" (unfinished)".utf8)
    private static let unwound = Array(" (unwound)".utf8)

    /// The header line of a trace recorded with CALLTRACE_FILTER: what the costs shown leave out.
    public static func filterLines(_ profile: Profile) -> [String] {
        (profile.filter.map { [$0.reportLine] } ?? [])
            + (profile.flightRecorder.map { [$0.reportLine] } ?? [])
    }

    /// The header lines when the runtime muted functions (adaptive muting): what that means for
    /// the costs shown, and, for gcc's code, the cost muting leaves behind and how to remove it.
    public static func mutedLines(_ profile: Profile) -> [String] {
        let count = profile.mutedCount
        guard count > 0 else { return [] }
        let one = count == 1
        let inside = profile.muted.filter(\.insideOwnCallsOnly).count
        let insideText = inside == 0 ? ""
            : "; \(inside) of them only inside \(inside == 1 ? "its" : "their") own calls (a recursion's inner calls: "
                + "the outer ones are still timed)"
        var lines = ["\(count) function\(one ? "" : "s") muted after running often and fast: from then on \(one ? "its" : "their") "
                     + "calls, slow or not, are part of \(one ? "its" : "their") callers' costs\(insideText) (CALLTRACE_MUTE=off times every call)"]
        if profile.mutedCodeCompiler == .gcc {
            let trace = profile.source.isEmpty ? "TRACE" : profile.source
            lines.append("gcc built \(one ? "it" : "them") with hooks: the code around \(one ? "its" : "their") skipped hook calls "
                         + "still runs and is in these costs, and can make them several times too high (\(BuildCompiler.gccHooksMeasured)); "
                         + "rebuild through calltrace-cc with sleds (the default), or leave \(one ? "it" : "them") out: calltrace exclude-list "
                         + "\(trace) -o hot.txt, then rebuild with CALLTRACE_EXCLUDE=hot.txt (docs/guide.md: a second build)")
        }
        return lines
    }

    /// The header line when some cost carries an uncertainty mark (`costIsUncertain`).
    static func uncertaintyLines(_ profile: Profile) -> [String] {
        guard !profile.measured,
              profile.threads.contains(where: { thread in
                  (0..<thread.count).contains { thread.costIsUncertain($0, measured: false) }
              }) else { return [] }
        return ["(±X ms): the cost has the hooks of the calls timed beneath it taken out at their calibrated cost; "
                + "their real cost varies with the code around them, so the cost is known only within X "
                + "(report --raw shows measured times)"]
    }

    public static func heading(_ thread: ProfileThread) -> String {
        let name = thread.name.isEmpty ? "" : " \"\(thread.name)\""
        return "== thread \(thread.tid)\(name) =="
    }
}
