@testable import CalltraceKit

/// A stream's first calls in a block shared with another thread (after a SEGMENT), decoded after
/// its later ones: thread 4242's `0x1000` [0, 9 ms) at depth 0 comes in its stream's second piece,
/// before `0x2000` [1, 3 ms) at depth 1 from its first, which sits in thread 4243's block after
/// that thread's `0x4000` [1, 7 ms). The streamed views must not guess: they ask for the whole
/// profile.
enum OutOfOrderTrace {
    static var bytes: [UInt8] {
        typealias T = SyntheticTrace
        let ms: UInt64 = 1_000_000
        var calls = T.Calls()
        let early = calls.call(function: 0x2000, start: 1 * ms, duration: 2 * ms, depth: 1)
        calls.reset()
        let late = calls.call(function: 0x1000, start: 0, duration: 9 * ms, depth: 0)
        calls.reset()
        let worker = calls.call(function: 0x4000, start: 1 * ms, duration: 6 * ms, depth: 1)
        var trace = T()
        trace.blocks = [.init(stream: 1, tid: 4242, seq: 1, payload: late),
                        .init(stream: 2, tid: 4243, seq: 0, payload: worker + T.segment(stream: 1, tid: 4242, seq: 0) + early)]
        return trace.bytes
    }
}
