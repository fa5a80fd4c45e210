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

    /// Running at both samples, blocked between: a call that starts in the interval and runs to its
    /// end ran after the thread woke (the runtime's last sample of an earlier call, then an idle
    /// spell, then a CPU-bound call): the blocked part lies before it, none of it in the call.
    func testCallStartingInAnIntervalRunningAtBothEndsHoldsNoBlockedTime() throws {
        let time = ThreadTime(samples: [
            sample(0, cpu: 0, delay: 0, .running),
            sample(20 * ms, cpu: 4 * ms, delay: 0, .running),
        ], clock: clock, flags: TraceFormat.SchedFlag.sampled)
        let call = try split(time, 17 * ms, 20 * ms)
        XCTAssertEqual(call.cpu, Nanoseconds(Int64(3 * ms)))
        XCTAssertEqual(call.blocked, .zero)
        // The whole interval keeps its parts.
        let whole = try split(time, 0, 20 * ms)
        XCTAssertEqual(whole.cpu, Nanoseconds(Int64(4 * ms)))
        XCTAssertEqual(whole.blocked, Nanoseconds(Int64(16 * ms)))
    }

    /// A call over thousands of intervals is added up from running sums: the same parts, to the
    /// nanosecond, as the calls covering the same intervals a few hundred at a time.
    func testALongCallAddsUpAsItsPieces() throws {
        var samples: [ThreadStateSample] = []
        var cpu: UInt64 = 0, delay: UInt64 = 0
        let states: [ThreadStateSample.State] = [.running, syscall("read"), syscall("poll"), .running, .kernel(wchan: "")]
        for i in 0..<3000 {
            let at = UInt64(i) * 2 * ms
            samples.append(sample(at, cpu: cpu, delay: delay, states[(i * 7) % states.count]))
            cpu += UInt64((i * 37) % 2000) * 1000
            delay += UInt64((i * 11) % 3) * 1000
        }
        let time = ThreadTime(samples: samples, clock: clock, flags: TraceFormat.SchedFlag.sampled)
        let whole = try split(time, 3 * ms, 5990 * ms)
        var pieces: [TimeSplit] = []
        var from: UInt64 = 3 * ms
        var ends: [UInt64] = []
        for k in 1...14 { ends.append(UInt64(k) * 400 * ms) }
        ends.append(5990 * ms)
        for to in ends where to > from {
            pieces.append(try split(time, from, to))
            from = to
        }
        func close(_ a: Nanoseconds, _ b: Nanoseconds, _ what: String) {
            XCTAssertLessThanOrEqual(abs(a.value - b.value), 100, "\(what): \(a) against \(b)")
        }
        close(whole.cpu, pieces.reduce(.zero) { $0 + $1.cpu }, "cpu")
        close(whole.preempted, pieces.reduce(.zero) { $0 + $1.preempted }, "preempted")
        close(whole.blocked, pieces.reduce(.zero) { $0 + $1.blocked }, "blocked")
        var byWhat: [String: Nanoseconds] = [:]
        for piece in pieces { for entry in piece.blockedOn { byWhat[entry.what, default: .zero] = byWhat[entry.what, default: .zero] + entry.time } }
        XCTAssertEqual(Set(whole.blockedOn.map(\.what)), Set(byWhat.keys))
        for entry in whole.blockedOn { close(entry.time, byWhat[entry.what] ?? .zero, entry.what) }
    }

    /// A crafted line with a different reason at each sample: a long call's whole intervals are
    /// still added up at once, their blocked time "unknown" in what; the parts still add up.
    func testManyReasonsStillAddUp() throws {
        var samples: [ThreadStateSample] = []
        for i in 0..<2000 {
            let at = UInt64(i) * ms
            samples.append(sample(at, cpu: at / 2, delay: 0, syscall("call\(i)")))
        }
        let time = ThreadTime(samples: samples, clock: clock, flags: TraceFormat.SchedFlag.sampled)
        let whole = try split(time, 0, 1999 * ms)
        XCTAssertEqual(whole.cpu + whole.blocked, Nanoseconds(Int64(1999 * ms)))
        XCTAssertEqual(whole.blockedOn.reduce(.zero) { $0 + $1.time }, whole.blocked)
        XCTAssertTrue(whole.blockedOn.contains { $0.what == "unknown" }, "\(whole.blockedOn.prefix(3))")
    }
}
