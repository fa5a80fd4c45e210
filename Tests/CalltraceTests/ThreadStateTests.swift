@testable import CalltraceKit
import Foundation
import XCTest

/// Why a call was slow, on real programs (docs/design.md, "Why a call was slow"): the runtime
/// samples each thread in a long call (THREAD_STATE records) and `report` splits each call's cost
/// into time on a CPU, preempted, blocked, and what it was blocked in. Fixtures/thread_state.c runs
/// one slow call a case and measures it itself, with its own clocks (its thread's CPU clock and
/// /proc/thread-self/schedstat), from an uninstrumented caller: that measure is the truth each
/// split is held to, within `TimeSplit.precision` (2 ms or 10 % of the cost) and what the samples
/// cannot place (`coverage`: nearly nothing on an idle machine).
final class ThreadStateTests: XCTestCase {
    /// How long each slow call of the fixture is made to last (its SLOW_MS).
    private static let slowMs = 60.0
    private static let threshold = "10ms"

    /// The fixture's builds, made once per compiler for the whole class.
    private static let builds = Locked<[Compiler: Fixture]>([:])

    /// gcc and clang with sleds, and with hooks.
    private static let compilers = Compiler.allCases

    private func fixture(_ compiler: Compiler) throws -> Fixture {
        if let built = Self.builds.withLock({ $0[compiler] }) { return built }
        let built = try Fixture.build(["thread_state.c"], compiler: compiler)
        Self.builds.withLock { $0[compiler] = built }
        return built
    }

    // MARK: - What the fixture and the trace say

    /// The fixture's own measure of one slow call, in ms; `delay` is nil when it could not read it.
    private struct Measure {
        var wall: Double
        var cpu: Double
        /// As the kernel counts it, which under load can exceed the time off a CPU (by some 10 %
        /// seen on a VM whose CPUs were all busy): no split says more than the call lasted.
        var delay: Double?
        /// Waiting for a CPU, within the time off one.
        var preempted: Double? { delay.map { min($0, max(0, wall - cpu)) } }
        /// Off a CPU and not waiting for one.
        var blocked: Double { max(0, wall - cpu - (delay ?? 0)) }
    }

    /// One call of `report --format jsonl`, in ms.
    private struct Call {
        var function: String
        var thread: Int
        /// Unix time, in seconds, of its start and end.
        var start: Double
        var end: Double
        var cost: Double
        var cpu: Double?
        var preempted: Double?
        var blocked: Double?
        var unknown: Double
        var blockedOn: [(what: String, time: Double)]
        var line: String

        var tolerance: Double { max(2, cost / 10) }
    }

    private struct Run {
        var compiler: Compiler
        var measures: [String: Measure]
        var calls: [Call]
        var trace: URL
        var decoded: Trace
        var report: String

        func call(_ function: String) -> Call? { calls.first { $0.function == function } }
    }

    private func run(_ compiler: Compiler, _ cases: [String], environment: [String: String] = [:],
                     hideTasks: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws -> Run {
        let fixture = try fixture(compiler)
        var env = ["CALLTRACE_THRESHOLD": Self.threshold]
        env.merge(environment) { $1 }
        let result: CommandResult
        let trace: URL
        if hideTasks {
            // A mount namespace of its own in which /proc/PID/task of the program is an empty
            // tmpfs: /proc/self/task/* and /proc/thread-self cannot be read; the rest of /proc can.
            trace = fixture.directory.appendingPathComponent("hidden.trace")
            try? FileManager.default.removeItem(at: trace)
            env["CALLTRACE_OUTPUT"] = trace.path
            result = try Command.run(try which("unshare"),
                                     ["-rm", "--fork", "sh", "-c", "mount -t tmpfs none /proc/$$/task && exec \"$0\" \"$@\"",
                                      fixture.binary.path] + cases,
                                     environment: env, currentDirectory: fixture.directory, timeout: 60)
        } else {
            (result, trace) = try fixture.run(cases, environment: env, traceName: cases.joined(separator: "-"), timeout: 60)
        }
        guard result.status == 0 else {
            throw failure("thread_state \(cases) (\(compiler)) failed: \(result)", file: file, line: line)
        }
        var measures: [String: Measure] = [:]
        for text in result.stdout.split(separator: "\n") {
            let words = text.split(separator: " ")
            var values: [String: Double] = [:]
            for word in words.dropFirst() {
                let pair = word.split(separator: "=")
                if pair.count == 2, let value = Double(pair[1]) { values[String(pair[0])] = value }
            }
            guard let wall = values["wall"], let cpu = values["cpu"], let delay = values["delay"] else {
                throw failure("unexpected output from thread_state: \(result.stdout)", file: file, line: line)
            }
            measures[String(words[0])] = Measure(wall: wall, cpu: cpu, delay: delay < 0 ? nil : delay)
        }
        let tree = try calltrace(["report", trace.path])
        XCTAssertEqual(tree.status, 0, "\(tree)", file: file, line: line)
        let jsonl = try calltrace(["report", "--format", "jsonl", trace.path])
        XCTAssertEqual(jsonl.status, 0, "\(jsonl)", file: file, line: line)
        let calls = try jsonl.stdout.split(separator: "\n").map { try Self.call(String($0), file: file, line: line) }
        return Run(compiler: compiler, measures: measures, calls: calls, trace: trace,
                   decoded: try TraceReader.read(path: trace.path), report: tree.stdout)
    }

    private static func call(_ line: String, file: StaticString, line number: UInt) throws -> Call {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let function = object["function"] as? String, let cost = object["cost"] as? Double,
              let thread = object["thread"] as? Int, let start = object["start"] as? Double,
              let end = object["time"] as? Double else {
            throw failure("unexpected JSON line: \(line)", file: file, line: number)
        }
        let blockedOn = (object["blocked_on"] as? [[String: Any]] ?? []).map {
            (what: $0["what"] as? String ?? "?", time: $0["time"] as? Double ?? .nan)
        }
        return Call(function: function, thread: thread, start: start, end: end, cost: cost, cpu: object["cpu"] as? Double,
                    preempted: object["preempted"] as? Double, blocked: object["blocked"] as? Double,
                    unknown: object["unknown"] as? Double ?? 0, blockedOn: blockedOn, line: line)
    }

    // MARK: - Checks

    /// The samples of `call`'s thread, times from the call's start, for the failure messages.
    private func samples(around call: Call, in run: Run) -> String {
        let trace = run.decoded
        return threadStates(of: call, in: run).map { sample in
            let ms = Double(trace.clock.unixTime(tick: sample.tick).value) / 1e6 - call.start * 1e3
            return String(format: "%9.3f ms cpu %9.3f delay %9.3f ", ms, Double(sample.cpu.value) / 1e6,
                          Double(sample.runDelay.value) / 1e6) + "\(sample.state)"
        }.joined(separator: "\n")
    }

    private func threadStates(of call: Call, in run: Run) -> [ThreadStateSample] {
        run.decoded.threadStates.filter { $0.tid == UInt64(call.thread) }.sorted { $0.tick.count < $1.tick.count }
    }

    /// What the samples of `call`'s thread can tell about it. `keptUp`: a sample before the call
    /// and one after it (on a machine too busy for the drain thread, the first may come well into
    /// the call, and the time before it is unknown). `ambiguity` (ms): an interval the call starts
    /// or ends in holds time outside the call, and where in the interval its time running fell is
    /// not known: the split of the call may be off by as much as the range of what it could hold.
    private func coverage(of call: Call, in run: Run) -> (keptUp: Bool, ambiguity: Double) {
        let clock = run.decoded.clock
        func ms(_ sample: ThreadStateSample) -> Double { Double(clock.unixTime(tick: sample.tick).value) / 1e6 }
        let start = call.start * 1e3, end = call.end * 1e3
        let states = threadStates(of: call, in: run)
        guard let first = states.first, let last = states.last, ms(first) <= start, ms(last) >= end else {
            return (false, 0)
        }
        var ambiguity = 0.0
        for (a, b) in zip(states, states.dropFirst()) {
            let from = ms(a), to = ms(b), wall = to - from
            guard (from < start && start < to) || (from < end && end < to) else { continue }
            let cpu = min(Double(b.cpu.value - a.cpu.value) / 1e6, wall)
            let running = cpu + min(max(0, Double(b.runDelay.value - a.runDelay.value) / 1e6), wall - cpu)
            let inside = min(to, end) - max(from, start)
            ambiguity += max(0, min(running, inside) - max(0, running - (wall - inside)))
        }
        return (true, ambiguity)
    }

    /// Runs the fixture until the sampler kept up with each of `functions` (`coverage`), at most
    /// three times: a busy machine can starve the drain thread, which is not what the tests check.
    private func sampledRun(_ compiler: Compiler, _ cases: [String], functions: [String],
                            environment: [String: String] = [:],
                            file: StaticString = #filePath, line: UInt = #line) throws -> Run {
        var notes: [String] = []
        for _ in 0..<3 {
            let run = try run(compiler, cases, environment: environment, file: file, line: line)
            let behind = functions.compactMap { run.call($0) }.filter { !coverage(of: $0, in: run).keptUp }
            if behind.isEmpty { return run }
            notes += behind.map { "\($0.line)\n\(samples(around: $0, in: run))" }
        }
        throw failure("the sampler did not keep up in three runs of \(cases) (\(compiler)):\n"
                      + notes.joined(separator: "\n"), file: file, line: line)
    }

    /// `function`'s split against the fixture's measure of it (`measure` names it in the
    /// fixture's output): each part within the call's tolerance, the parts adding up to the cost,
    /// and when it was blocked, most of it in `blockedOn`.
    @discardableResult
    private func checkSplit(_ run: Run, function: String, measure name: String, blockedOn what: String? = nil,
                            file: StaticString = #filePath, line: UInt = #line) throws -> Call {
        guard let measure = run.measures[name] else {
            throw failure("no measure of \(name) (\(run.compiler)): \(run.measures)", file: file, line: line)
        }
        guard let call = run.call(function) else {
            throw failure("no \(function) in the trace (\(run.compiler)):\n\(run.report)", file: file, line: line)
        }
        guard let cpu = call.cpu, let preempted = call.preempted, let blocked = call.blocked else {
            throw failure("\(function) has no split (\(run.compiler)): \(call.line)", file: file, line: line)
        }
        let (_, ambiguity) = coverage(of: call, in: run)
        let tolerance = call.tolerance + ambiguity
        // The fixture's clocks bracket the call: its cost is within them, exactly (but for the
        // clocks' rounding). What lies between them and the call (the hooks, a wait for a CPU
        // there) is in the fixture's measure and not in the call: any measured part may exceed
        // the traced one by that much more.
        let outside = measure.wall - call.cost
        let context = "\(run.compiler) \(name) (± \(tolerance) ms): measured wall \(measure.wall) cpu "
            + "\(measure.cpu) delay \(measure.delay ?? -1); traced \(call.line)\n\(samples(around: call, in: run))"
        XCTAssertLessThanOrEqual(call.cost, measure.wall + 0.05, "cost: \(context)", file: file, line: line)
        XCTAssertEqual(cpu + preempted + blocked + call.unknown, call.cost, accuracy: 0.01, "sum: \(context)",
                       file: file, line: line)
        func check(_ part: String, _ traced: Double, _ measured: Double) {
            XCTAssertLessThanOrEqual(traced, measured + tolerance, "\(part): \(context)", file: file, line: line)
            XCTAssertGreaterThanOrEqual(traced, measured - outside - tolerance, "\(part): \(context)",
                                        file: file, line: line)
        }
        check("cpu", cpu, measure.cpu)
        check("preempted", preempted, measure.preempted ?? .nan)
        check("blocked", blocked, measure.blocked)
        XCTAssertLessThanOrEqual(call.unknown, call.tolerance, "unknown: \(context)", file: file, line: line)
        if let what {
            check("blocked on \(what)", call.blockedOn.first { $0.what == what }?.time ?? 0, measure.blocked)
            XCTAssertEqual(call.blockedOn.first?.what, what, "\(context)", file: file, line: line)
            let treeLine = run.report.split(separator: "\n").first { $0.contains("|\(function) (") }
            XCTAssertTrue(treeLine?.contains(" (blocked ") == true, "no blocked suffix:\n\(run.report)",
                          file: file, line: line)
        }
        return call
    }

    // MARK: - On a CPU, asleep

    /// `crunch` runs on a CPU until it had 60 ms of it: its split is all CPU (and, on a busy
    /// machine, waiting for one), no call is marked blocked.
    func testCPUBoundCallIsOnACPU() throws {
        for compiler in Self.compilers {
            let run = try sampledRun(compiler, ["cpu"], functions: ["crunch"])
            let call = try checkSplit(run, function: "crunch", measure: "cpu")
            XCTAssertGreaterThanOrEqual(call.cost, Self.slowMs, "\(call.line)")
            XCTAssertFalse(run.report.contains("(blocked "), run.report)
        }
    }

    /// `nap` sleeps 60 ms: blocked in nanosleep for them.
    func testSleepIsBlockedInNanosleep() throws {
        for compiler in Self.compilers {
            let run = try sampledRun(compiler, ["sleep"], functions: ["nap"])
            let call = try checkSplit(run, function: "nap", measure: "sleep", blockedOn: "nanosleep")
            XCTAssertGreaterThanOrEqual(call.cost, Self.slowMs, "\(call.line)")
        }
    }

    // MARK: - Blocked in what

    /// `read_pipe` reads a pipe another thread writes 60 ms later.
    func testReadOfAPipeFilledLaterIsBlockedInReadPipe() throws {
        for compiler in Self.compilers {
            try checkSplit(try sampledRun(compiler, ["pipe"], functions: ["read_pipe"]), function: "read_pipe", measure: "pipe", blockedOn: "read pipe")
        }
    }

    /// `lock_config` waits for the global `config_lock` another thread holds: named by its symbol.
    /// `wait_config` waits on the global condition variable `config_changed`, whose futex word lies
    /// inside it.
    func testLockWaitsNameTheLock() throws {
        for compiler in Self.compilers {
            let run = try sampledRun(compiler, ["lock", "cond"], functions: ["lock_config", "wait_config"])
            try checkSplit(run, function: "lock_config", measure: "lock", blockedOn: "futex config_lock")
            try checkSplit(run, function: "wait_config", measure: "cond", blockedOn: "futex config_changed")
        }
    }

    /// `lock_object` waits for a lock inside a heap object: no symbol holds its address, so the
    /// futex is not named (never a guess). Names come from the symbol table of the module holding
    /// the address, whole objects: the lock's futex word and any byte within it are named, not
    /// the bytes past the end.
    func testLockInAHeapObjectIsNotNamed() throws {
        for compiler in Self.compilers {
            let run = try sampledRun(compiler, ["heap", "lock"], functions: ["lock_object", "lock_config"])
            try checkSplit(run, function: "lock_object", measure: "heap", blockedOn: "futex")
            try checkSplit(run, function: "lock_config", measure: "lock", blockedOn: "futex config_lock")
            // The same lookups, made directly on the addresses the samples hold.
            let futexes = run.decoded.threadStates.compactMap { sample -> UInt64? in
                guard case .syscall(_, "futex", let address, _) = sample.state else { return nil }
                return address
            }
            let symbolicator = Symbolicator(modules: run.decoded.modules) { XCTFail("unexpected warning: \($0)") }
            let named = futexes.filter { symbolicator.dataSymbol(at: $0) == "config_lock" }
            XCTAssertEqual(Set(named).count, 1, "one address names config_lock: \(futexes)")
            let lock = try XCTUnwrap(named.first)
            let size = UInt64(MemoryLayout<pthread_mutex_t>.size)
            XCTAssertEqual(symbolicator.dataSymbol(at: lock + size - 1), "config_lock")
            XCTAssertNotEqual(symbolicator.dataSymbol(at: lock + size), "config_lock")
        }
    }

    /// `dial` connects to a unix socket whose server's backlog is full until it accepts, 60 ms
    /// later; `ask` waits for a reply the server sends 60 ms after the request.
    func testSocketWaitsAreConnectAndRecv() throws {
        for compiler in Self.compilers {
            try checkSplit(try sampledRun(compiler, ["connect"], functions: ["dial"]), function: "dial", measure: "connect", blockedOn: "connect")
            try checkSplit(try sampledRun(compiler, ["recv"], functions: ["ask"]), function: "ask", measure: "recv", blockedOn: "recv")
        }
    }

    /// `read_fifo` reads a FIFO another thread writes 60 ms later: blocked on the FIFO's path.
    func testReadOfAFIFONamesItsPath() throws {
        for compiler in Self.compilers {
            let run = try sampledRun(compiler, ["fifo"], functions: ["read_fifo"])
            let fifo = try fixture(compiler).directory.resolvingSymlinksInPath()
                .appendingPathComponent("thread_state.fifo").path
            try checkSplit(run, function: "read_fifo", measure: "fifo", blockedOn: "read \(fifo)")
        }
    }

    // MARK: - Preempted

    /// `crunch` shares one CPU with a spinning thread: about half of its time it waits for it.
    func testCallSharingItsCPUIsPreempted() throws {
        for compiler in Self.compilers {
            let run = try sampledRun(compiler, ["shared"], functions: ["crunch"])
            guard let measure = run.measures["shared"], let delay = measure.delay else {
                throw failure("no run delay measured: \(run.measures)")
            }
            // The precondition: the spinning thread took a good part of the CPU.
            XCTAssertGreaterThanOrEqual(delay, 0.3 * measure.wall, "crunch was not slowed down: \(measure)")
            let call = try checkSplit(run, function: "crunch", measure: "shared")
            XCTAssertEqual((call.cpu ?? 0) + (call.preempted ?? 0), call.cost,
                           accuracy: call.tolerance + coverage(of: call, in: run).ambiguity, call.line)
            XCTAssertTrue(run.report.contains("|crunch (preempted "), run.report)
        }
    }

    // MARK: - Threads

    /// With CALLTRACE_THREADS=all, a worker's slow call has a split of its own: `worker_nap` sleeps
    /// in the worker while `crunch` runs on the main thread.
    func testWorkerThreadsCallHasItsOwnSplit() throws {
        for compiler in [Compiler.gcc, .clang] {
            let run = try sampledRun(compiler, ["worker"], functions: ["worker_nap", "crunch"],
                                     environment: ["CALLTRACE_THREADS": "all"])
            let nap = try checkSplit(run, function: "worker_nap", measure: "worker", blockedOn: "nanosleep")
            let crunch = try checkSplit(run, function: "crunch", measure: "main")
            XCTAssertNotEqual(nap.thread, crunch.thread)
        }
    }

    // MARK: - When /proc hides the threads

    /// With the program's /proc/PID/task hidden, nothing is sampled and the trace says so: the header's
    /// flags say unavailable, no call has a split, and `report` still shows the calls.
    func testHiddenTaskDirectoryGivesNoSplit() throws {
        for compiler in [Compiler.gcc, .clang] {
            let run = try run(compiler, ["sleep", "cpu"], hideTasks: true)
            // The precondition: the fixture could not read its own thread's schedstat.
            XCTAssertEqual(run.measures.count, 2, "\(run.measures)")
            XCTAssertTrue(run.measures.values.allSatisfy { $0.delay == nil }, "/proc/thread-self was readable")
            let trace = try TraceReader.read(path: run.trace.path)
            XCTAssertNotEqual(trace.header.schedFlags & TraceFormat.SchedFlag.unavailable, 0)
            XCTAssertEqual(trace.header.schedFlags & TraceFormat.SchedFlag.sampled, 0)
            XCTAssertEqual(trace.threadStates, [])
            XCTAssertEqual(Set(run.calls.map(\.function)), ["nap", "crunch"], run.report)
            for call in run.calls {
                XCTAssertNil(call.cpu, call.line)
                XCTAssertNil(call.blocked, call.line)
                XCTAssertTrue(call.blockedOn.isEmpty, call.line)
            }
            XCTAssertTrue(run.report.contains("|nap\n"), run.report)
            XCTAssertFalse(run.report.contains("(blocked"), run.report)
        }
    }
}
