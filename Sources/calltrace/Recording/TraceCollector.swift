import CalltraceKit
import Glibc

/// After the program has ended: moves the traces this run wrote out of `record`'s private
/// directory, the program's own to the destination and every other one (child processes, images
/// before an exec) next to it under its own name, and removes the directory.
struct TraceCollector {
    let directory: RecordDirectory
    let destination: TraceDestination
    let programPid: pid_t

    struct Outcome {
        /// Where the program's own trace went, if the runtime wrote one.
        var programTrace: FilePath?
        /// Where the other traces went.
        var otherTraces: [FilePath] = []
        /// Traces that could not be moved, with why: they stay in the private directory.
        var failures: [String] = []
        /// False when the private directory is still there: a trace could not be moved, or
        /// processes the program left running keep creating traces in it.
        var removedDirectory = false
    }

    func collect() -> Outcome {
        var outcome = Outcome()
        let target = destination.path(forProgram: programPid)
        // A process still running (a daemon the program started) may create its trace meanwhile:
        // look again until the directory is empty, a few times.
        for _ in 0..<3 {
            let traces = directory.traces()
            // The program's own trace is its latest image's: the last of its pid.
            let own = traces.last { $0.pid == programPid }
            if let own, outcome.programTrace == nil {
                let source = directory.path.appending(own.name)
                if target.replaces {
                    if let failure = FileMoves.replacing(source, with: target.path) {
                        outcome.failures.append("cannot move the trace to \(target.path): \(failure); it stays at \(source)")
                    } else {
                        outcome.programTrace = target.path
                    }
                } else {
                    switch FileMoves.toFreeName(source, near: target.path) {
                    case let .success(path): outcome.programTrace = path
                    case let .failure(failure):
                        outcome.failures.append("cannot move the trace to \(target.path): \(failure.reason); it stays at \(source)")
                    }
                }
            }
            let targetDirectory = target.path.directory
            for trace in traces where trace.name != own?.name {
                let source = directory.path.appending(trace.name)
                switch FileMoves.toFreeName(source, near: targetDirectory.appending(trace.name)) {
                case let .success(path): outcome.otherTraces.append(path)
                case let .failure(failure):
                    outcome.failures.append("cannot move \(trace.name) to \(targetDirectory): \(failure.reason); it stays at \(source)")
                }
            }
            if !outcome.failures.isEmpty { break }
            if directory.remove() {
                outcome.removedDirectory = true
                break
            }
        }
        return outcome
    }
}
