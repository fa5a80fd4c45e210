/// `report --format json`: the call trees as one JSON document, calls nested as in the tree view
/// (a call left out leaves its shown descendants under its nearest shown ancestor):
///
/// ```
/// {"program":"/usr/bin/app","pid":4242,"threshold_ms":10,"measured":false,"muted_functions":0,
///  "threads":[{"tid":4242,"name":"app","main":true,"calls":[
///   {"function":"main","module":"app","cost_ms":121.4,"self_ms":80.79,"start_ms":0.52,"depth":0,
///    "children":[...]}]}]}
/// ```
///
/// A trace recorded with CALLTRACE_FILTER carries it after `muted_functions`, as the text header
/// does: `"filter":{"spec":"work,-slow_part","excluded_functions":1,"included_functions":1,
/// "text":"recorded with CALLTRACE_FILTER=work,-slow_part: ..."}`.
///
/// Times are milliseconds (`start_ms` since the process started); `file`, `line`, `unfinished`,
/// `unwound` and `preempted_ms` appear when known or true, as in the JSON lines; `hangs` (as
/// `hangs --format json` writes them) under a call the main thread hung in.
public enum ReportJSONView: ProfileView {
    public static let command = ViewCommand.report
    public static let format = "json"
    public static let summary = "the call trees as one JSON document"
    public static let needsLines = true

    public static func render(_ input: ViewInput, options: ViewOptions, to output: ByteOutput) {
        guard let profile = input.profiles.first else { return }
        var nesting = JSONNesting()
        nesting.open(.object, in: output)
        output.writeJSONKey("program")
        output.writeJSONString(profile.program)
        output.write(",")
        output.writeJSONKey("pid")
        output.writeInteger(profile.pid)
        output.write(",")
        output.writeJSONKey("threshold_ms")
        output.writeMilliseconds(profile.threshold)
        output.write(",")
        output.writeJSONKey("measured")
        output.write(profile.measured ? "true" : "false")
        output.write(",")
        output.writeJSONKey("muted_functions")
        output.writeInteger(profile.mutedCount)
        output.write(",")
        if let filter = profile.filter {
            output.writeJSONKey("filter")
            output.write("{")
            output.writeJSONKey("spec")
            output.writeJSONString(filter.spec)
            output.write(",")
            output.writeJSONKey("excluded_functions")
            output.writeInteger(filter.excludedFunctions)
            output.write(",")
            output.writeJSONKey("included_functions")
            output.writeInteger(filter.includedFunctions)
            output.write(",")
            output.writeJSONKey("text")
            output.writeJSONString(filter.reportLine)
            output.write("},")
        }
        output.writeJSONKey("threads")
        nesting.open(.array, in: output)
        for (position, thread) in profile.threads.enumerated() {
            if position > 0 { output.write(",") }
            nesting.open(.object, in: output)
            output.writeJSONKey("tid")
            output.writeInteger(thread.tid)
            output.write(",")
            output.writeJSONKey("name")
            output.writeJSONString(thread.name)
            output.write(",")
            output.writeJSONKey("main")
            output.write(thread.isMain ? "true" : "false")
            output.write(",")
            output.writeJSONKey("calls")
            nesting.open(.array, in: output)
            writeCalls(thread, profile: profile, options: options, to: output)
            nesting.close(downTo: 2, in: output)  // the calls and the thread
        }
        nesting.close(downTo: 0, in: output)
        output.write(byte: UInt8(ascii: "\n"))
    }

    /// The shown calls, nested, without recursion: a stack of the tree depths of the shown calls
    /// whose `children` array is open. Each call is one unit, `{...,"children":[` to `]}`, closed
    /// when the walk leaves it (a tree deeper than `JSONNesting` keeps).
    private static func writeCalls(_ thread: ProfileThread, profile: Profile, options: ViewOptions,
                                   to output: ByteOutput) {
        let filter = CallFilter(profile: profile, options: options)
        let functions = NameArena(profile.functions.map(functionFields))
        let hungCalls = HungCalls(profile: profile, thread: thread)
        var open: [Int] = []
        var needsComma = false
        thread.forEachPreOrder { call, treeDepth in
            guard filter.shows(thread, call) else { return }
            while let last = open.last, last >= treeDepth {
                open.removeLast()
                output.write(static: "]}")
                needsComma = true
            }
            if needsComma { output.write(byte: UInt8(ascii: ",")) }
            output.write(functions[Int(thread.function[call])])
            writeCall(thread, call, to: output)
            if !hungCalls.isEmpty, case let hangs = hungCalls.hangs(thread, call), !hangs.isEmpty {
                output.write(static: ",\"hangs\":[")
                for (index, hang) in hangs.enumerated() {
                    if index > 0 { output.write(byte: UInt8(ascii: ",")) }
                    HangsJSONView.write(hang, profile: profile, to: output)
                }
                output.write(byte: UInt8(ascii: "]"))
            }
            output.write(static: ",\"children\":[")
            open.append(treeDepth)
            needsComma = false
        }
        for _ in open { output.write(static: "]}") }
    }

    /// `{"function":...` and the function's other fields, the same for each of its calls.
    private static func functionFields(_ function: ProfileFunction) -> String {
        ByteOutput.text { output in
            output.write("{")
            output.writeJSONKey("function")
            output.writeJSONString(function.name)
            if let module = function.module {
                output.write(",")
                output.writeJSONKey("module")
                output.writeJSONString(module)
            }
            if let file = function.file {
                output.write(",")
                output.writeJSONKey("file")
                output.writeJSONString(file)
            }
            if let line = function.line {
                output.write(",")
                output.writeJSONKey("line")
                output.writeInteger(line)
            }
        }
    }

    private static func writeCall(_ thread: ProfileThread, _ call: Int, to output: ByteOutput) {
        output.write(static: ",\"cost_ms\":")
        output.writeMilliseconds(thread.cost(call))
        output.write(static: ",\"self_ms\":")
        output.writeMilliseconds(thread.selfTime(call))
        output.write(static: ",\"start_ms\":")
        output.writeMilliseconds(thread.start(call).sinceStart)
        output.write(static: ",\"depth\":")
        output.write(UInt64(thread.depth(call)), width: 0)
        if thread.depthAndFlags[call] >> 24 != 0 {
            let flags = thread.flags(call)
            if flags.contains(.unfinished) { output.write(static: ",\"unfinished\":true") }
            if flags.contains(.unwound) { output.write(static: ",\"unwound\":true") }
            let preempted = thread.preempted(call)
            if preempted > .zero {
                output.write(static: ",\"preempted_ms\":")
                output.writeMilliseconds(preempted)
            }
            if let split = thread.split(call) {
                output.writeTimeSplitMembers(split, milliseconds: true, preemptedWritten: preempted > .zero)
            }
        }
    }
}
