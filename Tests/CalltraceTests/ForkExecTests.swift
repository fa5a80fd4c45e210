import CalltraceKit
import Foundation
import XCTest

/// fork and exec: each process, and each image after exec, writes a trace of its own.
final class ForkExecTests: XCTestCase {
    func testForkedChildWritesItsOwnTraceNamedWithItsPid() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["fork.c"], compiler: compiler)
            let template = fixture.directory.appendingPathComponent("fork-%p.trace").path
            let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": template])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let parentPid = try XCTUnwrap(pid(after: "parent", in: result.stdout), result.stdout)
            let childPid = try XCTUnwrap(pid(after: "child", in: result.stdout), result.stdout)
            XCTAssertEqual(traceFiles(in: fixture.directory), ["fork-\(childPid).trace", "fork-\(parentPid).trace"].sorted(),
                           "\(compiler): one trace per process, %p expanded")

            let parent = try RecordedTrace(fixture.directory.appendingPathComponent("fork-\(parentPid).trace"))
            XCTAssertEqual(parent.trace.header.pid, UInt64(parentPid))
            XCTAssertEqual(parent.outline, ["main", "  before_fork", "  parent_work"], "\(compiler) parent:\n\(parent.tree)")
            XCTAssertTrue(parent.calls(named: "child_work").isEmpty, "the child's calls are not the parent's")
            XCTAssertTrue(parent.trace.header.closedCleanly)
            XCTAssertEqual(parent.trace.warnings, [], "\(compiler) parent")

            let child = try RecordedTrace(fixture.directory.appendingPathComponent("fork-\(childPid).trace"))
            XCTAssertEqual(child.trace.header.pid, UInt64(childPid))
            XCTAssertEqual(child.trace.process?.ppid, UInt64(parentPid))
            // The call that forked goes on in the child; what ran before the fork stays the parent's.
            XCTAssertEqual(child.outline, ["main", "  spawn_child", "    child_work"], "\(compiler) child:\n\(child.tree)")
            XCTAssertTrue(child.calls.allSatisfy { !$0.unfinished && !$0.unwound }, child.tree)
            assertCost(child.calls(named: "child_work").first, atLeastMs: 15, below: 500, in: child)
            assertCost(child.calls(named: "main").first, atLeastMs: 27, below: 1500, in: child)
            XCTAssertTrue(child.trace.header.closedCleanly)
            XCTAssertEqual(child.trace.warnings, [], "\(compiler) child")
        }
    }

    func testForkChildRecordingABurstAtOnceLosesNothing() throws {
        // The child's 10,000 inherited calls are recorded at its exit, a moment after its trace
        // opened with 3 blocks to spare (48 KiB with 16 KiB blocks): the rest must come in time.
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["fork_burst.c"], compiler: compiler)
            let template = fixture.directory.appendingPathComponent("burst-%p.trace").path
            let (result, _) = try fixture.run(["10000"], environment: [
                "CALLTRACE_OUTPUT": template, "CALLTRACE_BUFFER": "4M", "CALLTRACE_MAX_DEPTH": "20000"])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let childPid = try XCTUnwrap(pid(after: "child", in: result.stdout), result.stdout)
            let child = try RecordedTrace(fixture.directory.appendingPathComponent("burst-\(childPid).trace"))
            let descents = child.calls(named: "descend")
            XCTAssertEqual(child.trace.header.drops, 0, "\(compiler)")
            XCTAssertEqual(descents.count, 10_000, "\(compiler)")
            XCTAssertTrue(descents.allSatisfy(\.unfinished), "\(compiler)")
            XCTAssertTrue(child.trace.header.closedCleanly)
            XCTAssertEqual(child.trace.warnings, [], "\(compiler) child")
        }
    }

    func testForkWithoutPidInTheNameGivesTheChildANewFile() throws {
        let fixture = try Fixture.build(["fork.c"], compiler: .gcc)
        let (result, url) = try fixture.run(traceName: "shared")
        XCTAssertEqual(result.status, 0, result.description)
        let parentPid = try XCTUnwrap(pid(after: "parent", in: result.stdout))
        let childPid = try XCTUnwrap(pid(after: "child", in: result.stdout))
        XCTAssertEqual(traceFiles(in: fixture.directory), ["shared-1.trace", "shared.trace"])
        let parent = try RecordedTrace(url)
        let child = try RecordedTrace(fixture.directory.appendingPathComponent("shared-1.trace"))
        XCTAssertEqual(parent.trace.header.pid, UInt64(parentPid))
        XCTAssertEqual(child.trace.header.pid, UInt64(childPid))
        // spawn_child is fast in the parent, unless a busy machine makes fork() take 10 ms.
        XCTAssertEqual(parent.outline.filter { !$0.hasSuffix("spawn_child") }, ["main", "  before_fork", "  parent_work"],
                       parent.tree)
        XCTAssertEqual(child.outline, ["main", "  spawn_child", "    child_work"], child.tree)
        XCTAssertEqual(parent.trace.warnings, [])
        XCTAssertEqual(child.trace.warnings, [])
    }

    func testForkFromAWorkerThreadTracesTheChild() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["fork.c"], compiler: compiler)
            let template = fixture.directory.appendingPathComponent("fork-%p.trace").path
            let (result, _) = try fixture.run(["thread"], environment: ["CALLTRACE_OUTPUT": template])
            XCTAssertEqual(result.status, 0, "\(compiler): \(result)")
            let parentPid = try XCTUnwrap(pid(after: "parent", in: result.stdout), result.stdout)
            let childPid = try XCTUnwrap(pid(after: "child", in: result.stdout), result.stdout)
            let parent = try RecordedTrace(fixture.directory.appendingPathComponent("fork-\(parentPid).trace"))
            XCTAssertEqual(parent.outline, ["main", "  before_fork", "  parent_work"], "\(compiler):\n\(parent.tree)")
            // The forking worker is the child's only thread, its main thread: it is recorded.
            let child = try RecordedTrace(fixture.directory.appendingPathComponent("fork-\(childPid).trace"))
            XCTAssertEqual(child.calls(named: "child_work").count, 1, "\(compiler) child:\n\(child.tree)")
            assertCost(child.calls(named: "child_work").first, atLeastMs: 15, below: 500, in: child)
            XCTAssertEqual(child.trace.threads.map(\.tid), [UInt64(childPid)], "\(compiler): \(child.trace.threads)")
            XCTAssertTrue(child.trace.header.closedCleanly)
        }
    }

    func testExecStartsAFreshTraceAndKeepsTheOneBefore() throws {
        for compiler in Compiler.allCases {
            let fixture = try Fixture.build(["exec.c"], compiler: compiler)
            let template = fixture.directory.appendingPathComponent("exec-%p.trace").path
            let (result, _) = try fixture.run(environment: ["CALLTRACE_OUTPUT": template])
            try assertExecTraces(result, in: fixture.directory, base: "exec-", label: "\(compiler) linked")
        }
    }

    func testExecWithThePreloadedRuntimeStartsAFreshTrace() throws {
        let fixture = try Fixture.build(["exec.c"], compiler: .gcc, wrapper: false)
        let (result, _) = try fixture.run(environment: ["LD_PRELOAD": Workspace.runtimeLibrary.path],
                                          traceName: "exec")
        try assertExecTraces(result, in: fixture.directory, base: "exec", label: "preloaded")
    }

    /// exec.c ran as pid P with the trace named `<base>[P].trace`: the image before exec wrote that
    /// one, the image after it `<base>[P]-1.trace`.
    private func assertExecTraces(_ result: CommandResult, in directory: URL, base: String, label: String,
                                  file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(result.status, 0, "\(label): \(result)", file: file, line: line)
        let before = try XCTUnwrap(pid(after: "before exec", in: result.stdout), result.stdout, file: file, line: line)
        let after = try XCTUnwrap(pid(after: "after exec", in: result.stdout), result.stdout, file: file, line: line)
        XCTAssertEqual(before, after, "exec keeps the pid", file: file, line: line)
        let name = base.hasSuffix("-") ? "\(base)\(before)" : base
        XCTAssertEqual(traceFiles(in: directory), ["\(name)-1.trace", "\(name).trace"], label, file: file, line: line)

        let first = try RecordedTrace(directory.appendingPathComponent("\(name).trace"), file: file, line: line)
        XCTAssertEqual(first.trace.header.pid, UInt64(before), file: file, line: line)
        XCTAssertEqual(first.trace.process?.arguments.count, 1, "\(label): \(String(describing: first.trace.process))",
                       file: file, line: line)
        XCTAssertEqual(first.calls(named: "before_exec").count, 1, "\(label) before exec:\n\(first.tree)", file: file, line: line)
        XCTAssertTrue(first.calls(named: "after_exec").isEmpty, "\(label): the new image wrote into the old trace:\n\(first.tree)",
                      file: file, line: line)
        assertCost(first.calls(named: "before_exec").first, atLeastMs: 12, below: 500, in: first, file: file, line: line)

        let second = try RecordedTrace(directory.appendingPathComponent("\(name)-1.trace"), file: file, line: line)
        XCTAssertEqual(second.trace.header.pid, UInt64(before), file: file, line: line)
        XCTAssertEqual(second.trace.process?.arguments.last, "after", file: file, line: line)
        XCTAssertEqual(second.outline, ["main", "  after_exec"], "\(label) after exec:\n\(second.tree)", file: file, line: line)
        XCTAssertTrue(second.trace.header.closedCleanly, file: file, line: line)
        XCTAssertEqual(second.trace.warnings, [], label, file: file, line: line)
    }
}
