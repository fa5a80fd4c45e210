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
        var json = JSONWriter(output)
        json.beginObject()
        json.member("program", profile.program)
        json.member("pid", profile.pid)
        json.member("threshold_ms", milliseconds: profile.threshold)
        json.member("measured", profile.measured)
        json.member("muted_functions", profile.mutedCount)
        json.key("threads")
        json.beginArray()
        for thread in profile.threads {
            json.beginObject()
            json.member("tid", thread.tid)
            json.member("name", thread.name)
            json.member("main", thread.isMain)
            json.key("calls")
            json.beginArray()
            writeCalls(thread, profile: profile, options: options, to: &json)
            json.endArray()
            json.endObject()
        }
        json.endArray()
        json.endObject()
        json.endLine()
    }

    /// The shown calls, nested, without recursion: a stack of the tree depths of the shown calls
    /// whose `children` array is open.
    private static func writeCalls(_ thread: ProfileThread, profile: Profile, options: ViewOptions,
                                   to json: inout JSONWriter) {
        let filter = CallFilter(profile: profile, options: options)
        let functions = NameArena(profile.functions.map(functionFields))
        let hungCalls = HungCalls(profile: profile, thread: thread)
        var open: [Int] = []
        thread.forEachPreOrder { call, treeDepth in
            guard filter.shows(thread, call) else { return }
            while let last = open.last, last >= treeDepth {
                open.removeLast()
                json.endArray()
                json.endObject()
            }
            json.beginObject()
            json.encodedMembers(functions[Int(thread.function[call])])
            writeCall(thread, call, to: &json)
            if !hungCalls.isEmpty, case let hangs = hungCalls.hangs(thread, call), !hangs.isEmpty {
                json.key("hangs")
                json.beginArray()
                for hang in hangs { HangsJSONView.write(hang, profile: profile, to: &json) }
                json.endArray()
            }
            json.key("children")
            json.beginArray()
            open.append(treeDepth)
        }
        for _ in open {
            json.endArray()
            json.endObject()
        }
    }

    /// `"function":...` and the function's other fields (members, no braces), the same for each
    /// of its calls.
    private static func functionFields(_ function: ProfileFunction) -> String {
        ByteOutput.text { output in
            var json = JSONWriter(output)
            json.member("function", function.name)
            if let module = function.module { json.member("module", module) }
            if let file = function.file { json.member("file", file) }
            if let line = function.line { json.member("line", line) }
        }
    }

    private static func writeCall(_ thread: ProfileThread, _ call: Int, to json: inout JSONWriter) {
        json.member("cost_ms", milliseconds: thread.cost(call))
        json.member("self_ms", milliseconds: thread.selfTime(call))
        json.member("start_ms", milliseconds: thread.start(call).sinceStart)
        json.member("depth", thread.depth(call))
        if thread.depthAndFlags[call] >> 24 != 0 {
            let flags = thread.flags(call)
            if flags.contains(.unfinished) { json.member("unfinished", true) }
            if flags.contains(.unwound) { json.member("unwound", true) }
            let preempted = thread.preempted(call)
            if preempted > .zero { json.member("preempted_ms", milliseconds: preempted) }
        }
    }
}
