@testable import CalltraceKit
import Foundation
import XCTest

/// Hangs (CALLTRACE_HANG): when the main thread has been inside a call without hook activity for
/// the threshold, the watchdog has it capture its native stack once, into a HANG record. The live
/// tests block an instrumented function 600 ms in an uninstrumented libc call
/// (Fixtures/hang.c) in each way the capture treats differently; the program must see nothing of
/// it (same output, exit status, errno, full wait); the synthetic ones pin the record's decoding.
final class HangTests: XCTestCase {
    typealias T = SyntheticTrace

    private struct Run {
        var trace: Trace
        var names: [[String]]    // each hang's stack, symbolicated
        var function: [String]   // each hang's hung call, symbolicated
        var url: URL
        var output: String       // the traced program's (the same as untraced)
    }

    /// Runs `mode` traced (CALLTRACE_HANG=200ms) and untraced; checks that the program saw the
    /// same, then reads the trace and names each hang's stack.
    private func run(_ mode: String, _ compiler: Compiler, environment: [String: String] = ["CALLTRACE_HANG": "200ms"],
                     file: StaticString = #filePath, line: UInt = #line) throws -> Run {
        let fixture = try Fixture.build(["hang.c"], compiler: compiler, file: file, line: line)
        let untraced = try fixture.runUntraced([mode])
        let (traced, url) = try fixture.run([mode], environment: environment, traceName: "hang-\(mode)")
        XCTAssertEqual(untraced.status, 3, "\(untraced)", file: file, line: line)
        XCTAssertEqual(traced.status, untraced.status, "\(traced)", file: file, line: line)
        XCTAssertEqual(traced.stdout, untraced.stdout, "the program saw the capture", file: file, line: line)
        if mode != "alarm" {
            XCTAssertTrue(traced.stdout.contains("errno unchanged"), traced.stdout, file: file, line: line)
            XCTAssertTrue(traced.stdout.contains("waited the full time: yes"), traced.stdout, file: file, line: line)
        }
        if mode == "read" { XCTAssertTrue(traced.stdout.contains("read hello"), traced.stdout, file: file, line: line) }
        if mode == "files" { XCTAssertTrue(traced.stdout.contains("files kept: 8 of 8"), traced.stdout, file: file, line: line) }
        if mode == "owned" { XCTAssertTrue(traced.stdout.contains("handler ran 0 times"), traced.stdout, file: file, line: line) }
        let trace = try TraceReader.read(path: url.path)
        let symbols = Symbolicator(modules: trace.modules, warn: { _ in })
        let names = trace.hangs.map { hang in hang.pcs.map { symbols.symbolicate($0, atTick: hang.capturedTick).name } }
        let function = trace.hangs.map { symbols.symbolicate($0.function, atTick: $0.capturedTick).name }
        return Run(trace: trace, names: names, function: function, url: url, output: traced.stdout)
    }

    /// One full (not partial) hang in `waiter`, whose stack names the libc function (any of
    /// `libc`'s spellings) beneath `waiter`, and `main` above it.
    private func assertOneFullHang(_ run: Run, waiter: String, libc: [String], resumed: Bool,
                                   before: Int64 = 600_000_000, file: StaticString = #filePath, line: UInt = #line) {
        let trace = run.trace
        XCTAssertEqual(trace.hangs.count, 1, "hangs: \(run.names)", file: file, line: line)
        XCTAssertEqual(trace.header.hangCount, 1, file: file, line: line)
        XCTAssertEqual(trace.header.hangThresholdNs, 200_000_000, file: file, line: line)
        XCTAssertEqual(trace.header.hangFlags, 0, file: file, line: line)
        guard let hang = trace.hangs.first, let names = run.names.first else { return }
        XCTAssertFalse(hang.isPartial, file: file, line: line)
        XCTAssertEqual(hang.resumedWait, resumed, "\(names)", file: file, line: line)
        XCTAssertEqual(run.function.first, waiter, file: file, line: line)
        XCTAssertEqual(hang.stream, trace.mainThread?.stream, file: file, line: line)
        XCTAssertEqual(hang.tid, trace.header.pid, file: file, line: line)
        let libcAt = names.firstIndex { name in libc.contains { name.contains($0) } }
        let waiterAt = names.firstIndex(of: waiter)
        let mainAt = names.firstIndex(of: "main")
        XCTAssertNotNil(libcAt, "no \(libc) in \(names)", file: file, line: line)
        XCTAssertNotNil(waiterAt, "no \(waiter) in \(names)", file: file, line: line)
        if let libcAt, let waiterAt, let mainAt {
            XCTAssertLessThan(libcAt, waiterAt, "innermost first: \(names)", file: file, line: line)
            XCTAssertLessThan(waiterAt, mainAt, "\(names)", file: file, line: line)
        } else {
            XCTFail("no main in \(names)", file: file, line: line)
        }
        // Quiet for the threshold at least (less a watchdog pass); captured well before the wait ended.
        let quiet = trace.clock.duration(ticks: hang.quietTicks)
        let inCall = trace.clock.duration(ticks: hang.capturedTick &- hang.callStartTick)
        XCTAssertGreaterThanOrEqual(quiet.value, 195_000_000, file: file, line: line)
        XCTAssertGreaterThanOrEqual(inCall.value, 200_000_000, file: file, line: line)
        XCTAssertLessThan(inCall.value, before, file: file, line: line)
    }

    /// The capture touches none of the program's files. libunwind's memory checks read and write a
    /// pipe of its own by number: opened on the drain thread (whose descriptor table is its own),
    /// those numbers named the files a program opened last, and each capture took a byte from one
    /// and wrote a byte into the next (design.md, "Hangs").
    func testCaptureLeavesTheProgramsFilesAlone() throws {
        for compiler in Compiler.allCases {
            let run = try run("files", compiler)
            assertOneFullHang(run, waiter: "wait_in_poll", libc: ["poll"], resumed: true)
        }
    }

    /// poll(NULL, 0, 600): the signal interrupts a timed sleep, which the handler resumes to its
    /// deadline: poll returns 0 after the full 600 ms.
    func testPollHangNamesPollAndItsCaller() throws {
        for compiler in Compiler.allCases {
            let run = try run("poll", compiler)
            assertOneFullHang(run, waiter: "wait_in_poll", libc: ["poll"], resumed: true)
        }
    }

    /// The program's own signal interrupts the resumed poll as it would have the untraced one:
    /// poll fails with EINTR at 400 ms, after the program's handler ran once.
    func testProgramSignalStillInterruptsAResumedWait() throws {
        for compiler in Compiler.allCases {
            let run = try run("alarm", compiler)
            assertOneFullHang(run, waiter: "wait_in_poll", libc: ["poll"], resumed: true, before: 400_000_000)
            XCTAssertTrue(run.output.contains("alarm returned -1 errno Interrupted system call"), run.output)
            XCTAssertTrue(run.output.contains("alarm handler ran 1 times, after 400 ms"), run.output)
        }
    }

    /// nanosleep (clock_nanosleep in the kernel): resumed like poll.
    func testSleepHangIsResumed() throws {
        for compiler in Compiler.allCases {
            let run = try run("sleep", compiler)
            assertOneFullHang(run, waiter: "wait_in_sleep", libc: ["nanosleep"], resumed: true)
        }
    }

    /// read() on a pipe: SA_RESTART restarts it; it returns the bytes written 600 ms later.
    func testReadHangIsRestarted() throws {
        for compiler in Compiler.allCases {
            let run = try run("read", compiler)
            assertOneFullHang(run, waiter: "wait_in_read", libc: ["read"], resumed: false)
        }
    }

    /// epoll_wait with no timeout: the handler makes the syscall run again.
    func testEpollHangIsReissued() throws {
        for compiler in Compiler.allCases {
            let run = try run("epoll", compiler)
            assertOneFullHang(run, waiter: "wait_in_epoll", libc: ["epoll_wait", "epoll_pwait"], resumed: true)
        }
    }

    /// pthread_mutex_lock on a mutex another thread holds 600 ms (a futex wait with no timeout).
    func testMutexHangNamesTheLock() throws {
        for compiler in Compiler.allCases {
            let run = try run("mutex", compiler)
            assertOneFullHang(run, waiter: "wait_in_lock", libc: ["mutex_lock", "lll_lock", "futex"], resumed: false)
        }
    }

    /// Without CALLTRACE_HANG there is no watchdog, and calls shorter than the threshold are no hang.
    func testNoHangWhenOffOrQuick() throws {
        for compiler in Compiler.allCases {
            let off = try run("poll", compiler, environment: ["CALLTRACE_THRESHOLD": "1ms"])
            XCTAssertEqual(off.trace.hangs, [])
            XCTAssertEqual(off.trace.header.hangThresholdNs, 0)
            XCTAssertEqual(off.trace.header.hangFlags, 0)
            let fixture = try Fixture.build(["hang.c"], compiler: compiler)
            let (result, url) = try fixture.run(["quick"], environment: ["CALLTRACE_HANG": "200ms"], traceName: "quick")
            XCTAssertEqual(result.status, 0, "\(result)")
            let quick = try TraceReader.read(path: url.path)
            XCTAssertEqual(quick.hangs, [], "ten 20 ms calls are no 200 ms hang")
            XCTAssertEqual(quick.header.hangThresholdNs, 200_000_000)
        }
    }

    /// A program with its own handler for the capture signal never receives it from us: the hang
    /// is recorded without a signal (the syscall and the instrumented calls), flagged.
    func testProgramOwningTheSignalIsLeftAlone() throws {
        for compiler in Compiler.allCases {
            let run = try run("owned", compiler)
            let trace = run.trace
            XCTAssertTrue(trace.hangs.first.map(\.isPartial) ?? false)
            XCTAssertEqual(trace.hangs.count, 1, "\(run.names)")
            XCTAssertNotEqual(trace.header.hangFlags & TraceFormat.HangFlag.signalOwned, 0)
            XCTAssertNotEqual(trace.header.hangFlags & TraceFormat.HangFlag.partial, 0)
            XCTAssertEqual(run.function.first, "wait_in_poll")
            let names = run.names.first ?? []
            XCTAssertTrue(names.contains { $0.contains("poll") && $0 != "wait_in_poll" }, "the syscall's pc: \(names)")
            XCTAssertEqual(Array(names.drop { $0 != "wait_in_poll" }), ["wait_in_poll", "main"])
            // The fixture prints how often its handler ran: the untraced comparison covers "0 times".
            let info = try calltrace(["info", run.url.path])
            XCTAssertTrue(info.stdout.contains("hangs:"), info.stdout)
            XCTAssertTrue(info.stdout.contains("the program owns the capture signal"), info.stdout)
        }
    }

    // MARK: - Decoding

    private func hangRecord(count: UInt64, pcs: [UInt64], stream: UInt64 = 1) -> [UInt8] {
        var body: [UInt8] = []
        for value in [stream, 4242, 5000, 1000, 0x401000, 2, 3900, TraceFormat.HangRecordFlag.resumed, count] {
            body += T.varint(value)
        }
        for pc in pcs { body += T.varint(pc) }
        return T.sized(TraceFormat.Tag.hang, body)
    }

    func testHangRecordIsDecodedAndDamagedOnesSkipped() throws {
        var trace = T()
        trace.blocks = [
            .init(stream: 0, tid: 0, seq: 0, payload: hangRecord(count: 2, pcs: [0x7f00_0000_1234, 0x401010])
                  + hangRecord(count: 1000, pcs: [1, 2])         // more pcs than a record holds
                  + hangRecord(count: 3, pcs: [1])                 // cut short
                  + hangRecord(count: 0, pcs: [], stream: 0)      // stream 0 is the metadata's
                  + hangRecord(count: 1, pcs: [0x401020])),
        ]
        let read = try TraceReader.read(bytes: trace.bytes)
        XCTAssertEqual(read.hangs, [
            TraceHang(stream: 1, tid: 4242, capturedTick: 5000, callStartTick: 1000, function: 0x401000, depth: 2,
                      quietTicks: 3900, flags: TraceFormat.HangRecordFlag.resumed, pcs: [0x7f00_0000_1234, 0x401010]),
            TraceHang(stream: 1, tid: 4242, capturedTick: 5000, callStartTick: 1000, function: 0x401000, depth: 2,
                      quietTicks: 3900, flags: TraceFormat.HangRecordFlag.resumed, pcs: [0x401020]),
        ])
        XCTAssertTrue(read.hangs[0].resumedWait)
        XCTAssertFalse(read.hangs[0].isPartial)
        XCTAssertEqual(read.warnings.filter { $0.contains("damaged record 0x8a") }.count, 3, "\(read.warnings)")
    }

    /// `info` counts the hangs captured (the header's count) and says how many the trace still
    /// holds when that is fewer (a flight recorder overwrote the others).
    func testInfoSaysHowManyOfTheCapturedHangsTheTraceHolds() throws {
        var trace = T()
        trace.hangThresholdNs = 250_000_000
        trace.hangCount = 3
        trace.blocks = [.init(stream: 0, tid: 0, seq: 0, payload: hangRecord(count: 1, pcs: [0x401020]))]
        let read = try TraceReader.read(bytes: trace.bytes)
        let info = InfoRenderer(trace: read).render()
        XCTAssertTrue(info.contains("threshold 250ms, 3 captured, 1 in the trace\n"), info)
        trace.hangCount = 1
        let all = try TraceReader.read(bytes: trace.bytes)
        let allInfo = InfoRenderer(trace: all).render()
        XCTAssertTrue(allInfo.contains("threshold 250ms, 1 captured\n"), allInfo)
    }
}
