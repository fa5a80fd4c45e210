@testable import CalltraceKit
import XCTest

/// `ThreadTime`'s arithmetic on hand-made samples (one tick is one ns): where a wait for a CPU
/// that schedstat counts late goes, and where a call that starts between two blocked samples
/// takes its parts from. ThreadStateTests holds the same to real programs.
final class ThreadTimeTests: XCTestCase {
    private let ms: UInt64 = 1_000_000
    private let clock: TickClock = {
        // SyntheticTrace's header calibrates one tick to one ns.
        (try? TraceReader.read(bytes: SyntheticTrace().bytes).clock)!
    }()

    private func sample(_ at: UInt64, cpu: UInt64, delay: UInt64, _ state: ThreadStateSample.State) -> ThreadStateSample {
        ThreadStateSample(stream: 1, tid: 42, tick: Ticks(at), cpu: Nanoseconds(Int64(cpu)),
                          runDelay: Nanoseconds(Int64(delay)), state: state)
    }

    private func syscall(_ name: String) -> ThreadStateSample.State {
        .syscall(number: 0, name: name, argument: 3, target: "")
    }

    private func split(_ time: ThreadTime, _ start: UInt64, _ end: UInt64) throws -> TimeSplit {
        try XCTUnwrap(time.split(stream: 1, start: Ticks(start), end: Ticks(end),
                                 cost: Nanoseconds(Int64(end - start))))
    }

    /// Asleep until 7.5 ms, then runnable, waiting for a CPU until 15.9 ms, then 0.1 ms on it.
    /// schedstat counts the 8.4 ms wait only once it ended (the sample at 16 ms): it goes back to
    /// where it was, over the samples that found the thread runnable, not into the last interval
    /// alone (which would leave 2.5 ms of it blocked).
    func testWaitUnderWayAtASampleGoesBackToWhereItWas() throws {
        let time = ThreadTime(samples: [
            sample(0, cpu: 0, delay: 0, syscall("nanosleep")),
            sample(8 * ms, cpu: 0, delay: 0, .running),
            sample(10 * ms, cpu: 0, delay: 0, .running),
            sample(16 * ms, cpu: ms / 10, delay: 8_400_000, .running),
        ], clock: clock, flags: TraceFormat.SchedFlag.sampled)
        let whole = try split(time, 0, 16 * ms)
        XCTAssertEqual(whole.cpu, Nanoseconds(Int64(ms / 10)))
        XCTAssertEqual(whole.preempted, Nanoseconds(8_400_000))
        XCTAssertEqual(whole.blocked, Nanoseconds(7_500_000))
        XCTAssertEqual(whole.blockedOn, [TimeSplit.BlockedOn(what: "nanosleep", time: Nanoseconds(7_500_000))])
        // The first interval: asleep, then waiting.
        let first = try split(time, 0, 8 * ms)
        XCTAssertEqual(first.blocked, Nanoseconds(7_500_000))
        XCTAssertEqual(first.preempted, Nanoseconds(500_000))
    }

    /// Blocked in connect at 0, in recv at 20 ms, 2 ms on a CPU between. A call that starts at 5 ms
    /// ran then: connect ended before, recv began after, so the call holds no connect time (the
    /// interval's blocked time is not halved between the two).
    func testCallStartingBetweenTwoBlockedSamplesHoldsTheRunningPart() throws {
        let time = ThreadTime(samples: [
            sample(0, cpu: 0, delay: 0, syscall("connect")),
            sample(20 * ms, cpu: 2 * ms, delay: 0, syscall("recv")),
        ], clock: clock, flags: TraceFormat.SchedFlag.sampled)
        let call = try split(time, 5 * ms, 20 * ms)
        XCTAssertEqual(call.cpu, Nanoseconds(Int64(2 * ms)))
        XCTAssertEqual(call.blockedOn, [TimeSplit.BlockedOn(what: "recv", time: Nanoseconds(Int64(13 * ms)))])
        // The call before it, ending at 5 ms: connect only.
        let before = try split(time, 0, 5 * ms)
        XCTAssertEqual(before.blockedOn, [TimeSplit.BlockedOn(what: "connect", time: Nanoseconds(Int64(5 * ms)))])
        XCTAssertEqual(before.cpu, .zero)
        // A call over the whole interval, starting and ending at its samples, keeps the halves.
        let halves = try split(time, 0, 20 * ms)
        XCTAssertEqual(halves.blockedOn.map(\.time), [Nanoseconds(Int64(9 * ms)), Nanoseconds(Int64(9 * ms))])
    }
}
