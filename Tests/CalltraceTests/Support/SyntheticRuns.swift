@testable import CalltraceKit
import Foundation

/// Small synthetic runs of one program ("/bin/app") for the views over functions (`top`, `diff`,
/// `check`): calls given in milliseconds, written in the order they ended. Without modules a
/// function is named by its address (`0x2000`). One tick is one nanosecond.
enum SyntheticRuns {
    struct Call {
        var function: UInt64
        var start: Double   // ms
        var duration: Double // ms
        var depth: Int64
    }

    static func call(_ function: UInt64, _ start: Double, _ duration: Double, depth: Int64 = 1) -> Call {
        Call(function: function, start: start, duration: duration, depth: depth)
    }

    /// The trace of one run: `calls` in the order they ended (children before parents).
    static func trace(_ calls: [Call], thresholdNs: UInt64 = 0) -> SyntheticTrace {
        var writer = SyntheticTrace.Calls()
        var payload: [UInt8] = []
        for call in calls {
            payload += writer.call(function: call.function, start: UInt64((call.start * 1e6).rounded()),
                                   duration: UInt64((call.duration * 1e6).rounded()), depth: call.depth)
        }
        var trace = SyntheticTrace()
        trace.blockSize = 1 << 16
        trace.thresholdNs = thresholdNs
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: SyntheticTrace.process(executable: "/bin/app", arguments: ["app"])),
            .init(stream: 1, tid: 4242, seq: 0, payload: payload),
        ]
        return trace
    }

    static func profile(_ trace: SyntheticTrace) throws -> Profile {
        try syntheticProfile(trace.bytes)
    }

    /// The baseline run: main 100 ms; 0x2000 twice (40 and 10 ms); 0x3000 recursive (20 ms with a
    /// 10 ms call of itself inside); 0x5000 1 ms.
    static let base = trace([
        call(0x2000, 10, 40), call(0x2000, 60, 10),
        call(0x3000, 75, 10, depth: 2), call(0x3000, 70, 20),
        call(0x5000, 95, 1),
        call(0x1000, 0, 100, depth: 0),
    ])

    /// The new run: main 120 ms; 0x2000 62 and 10 ms; 0x3000 gone; 0x4000 new (3 ms); 0x5000 1.01 ms.
    static let new = trace([
        call(0x2000, 10, 62), call(0x2000, 80, 10),
        call(0x4000, 90, 3),
        call(0x5000, 95, 1.01),
        call(0x1000, 0, 120, depth: 0),
    ])

    /// A profile of top-level calls of named functions (names that synthetic traces, which have no
    /// modules, cannot give).
    static func namedProfile(_ calls: [(ProfileFunction, Int64)]) -> Profile {
        var functions: [ProfileFunction] = []
        var thread = ProfileThread(tid: 4242, name: "app", isMain: true)
        var start: [Int64] = [], cost: [Int64] = []
        for (index, (function, total)) in calls.enumerated() {
            if !functions.contains(function) { functions.append(function) }
            thread.function.append(Int32(functions.firstIndex(of: function) ?? 0))
            start.append(Int64(index) * 1_000_000_000)
            cost.append(total)
            thread.overhead.append(0)
            thread.depthAndFlags.append(0)
            thread.roots.append(Int32(index))
            thread.firstChild.append(-1)
            thread.nextSibling.append(-1)
            thread.parent.append(-1)
        }
        thread.setTimes(start: start, cost: cost)
        return Profile(program: "/bin/app", functions: functions, threads: [thread])
    }
}
