import Glibc

/// What the header says about how the recording went, as warning lines: how the program ended,
/// and every reason records were dropped or recording stopped (docs/trace-format.md, `lost`).
enum RecordingNotes {
    static func lines(header: TraceHeader, process: TracedProcess?, records: Int, stillRunning: Bool) -> [String] {
        var lines: [String] = []
        if header.crashed {
            lines.append("the program crashed (signal \(header.signal)); showing \(records) records written before that")
        } else if stillRunning {
            lines.append("the program (pid \(header.pid)) is still running; the trace holds what it recorded "
                         + "so far (\(records) records)")
        } else if !header.closedCleanly {
            lines.append("the trace was not closed cleanly (the program was killed or crashed); "
                         + "showing \(records) records written before that")
        }
        // Each count names its own reason; the `lost` lines below say more.
        let blockDrops = header.callsDroppedForBlocks
        if blockDrops > 0 {
            // Before the header said why, a full ring was the only reason.
            lines.append("\(blockDrops) calls were dropped"
                         + (header.lost & TraceHeader.blockDropReasons == 0
                            ? " because the trace buffer was full (record with a larger --buffer)"
                            : ": their thread had no trace block to write to"))
        }
        if header.nestedDrops > 0 {
            lines.append("\(header.nestedDrops) calls were dropped because a signal handler ran while "
                         + "their thread was writing a record")
        }
        lines += lostLines(header, process: process)
        return lines
    }

    /// One line per `lost` bit set, and one for all the bits this reader does not know.
    static func lostLines(_ header: TraceHeader, process: TracedProcess?) -> [String] {
        typealias Lost = TraceFormat.Lost
        let lost = header.lost
        var lines: [String] = []
        // `lost_errno` is the first failure to get space: it belongs to the reason it explains.
        let errnoBit = spaceBit(forErrno: header.lostErrno, lost: lost)
        func because(_ bit: UInt32) -> String {
            guard bit == errnoBit, header.lostErrno != 0 else { return "" }
            return " (\(String(cString: strerror(Int32(clamping: header.lostErrno)))))"
        }
        if lost & Lost.ringEmpty != 0 {
            lines.append("records were dropped: a burst of calls outran the trace's block ring "
                         + "(record with a larger --buffer, CALLTRACE_BUFFER)")
        }
        if lost & Lost.noSpace != 0 {
            lines.append("records were dropped: the file system had no room for the trace" + because(Lost.noSpace)
                         + "; the runtime leaves 5 % of it (at most 1 GiB) to the program, and CALLTRACE_LIMIT keeps "
                         + "a trace within a size")
        }
        if lost & Lost.fileLimit != 0 {
            lines.append("recording stopped: the trace reached the file size limit (RLIMIT_FSIZE)" + because(Lost.fileLimit))
        }
        if lost & Lost.mapFailed != 0 {
            lines.append("records were dropped: a trace block could not be mapped (out of memory or mappings)"
                         + because(Lost.mapFailed))
        }
        if lost & Lost.noDrain != 0 {
            lines.append("records were dropped: the runtime's drain thread could not run, so only the blocks "
                         + "prepared at start were used")
        }
        if lost & Lost.mainAtExit != 0 {
            lines.append("the main thread's open calls could not be recorded when another thread ended the process "
                         + "(membarrier unavailable, or the main thread was inside a record write)")
        }
        if lost & Lost.argsCut != 0 {
            let omitted = process?.omittedArguments ?? 0
            let count = omitted > 0 ? " (\(omitted) argument\(omitted == 1 ? "" : "s") left out)" : ""
            lines.append("the command line was too long for the trace and was cut\(count)")
        }
        if lost & Lost.marks != 0 {
            lines.append("marks, frames or span events were dropped: more came than the runtime's queue of them holds "
                         + "before its drain thread could write them (1024 at a time), or they came after the trace closed")
        }
        if lost & Lost.muting != 0 {
            let count = header.callsLostToMuting
            lines.append(count == 1
                ? "1 call that may have been slow was lost: it began while its function was being muted, and lost its "
                    + "exit hook (CALLTRACE_MUTE=off keeps every function timed)"
                : (count == 0 ? "calls" : "\(count) calls") + " that may have been slow were lost: they began while their "
                    + "function was being muted, and lost their exit hook (CALLTRACE_MUTE=off keeps every function timed)")
        }
        if lost & Lost.metadata != 0 {
            lines.append("metadata records (modules, thread names, marks, frames, spans, muted functions) were dropped: "
                         + "no block was ready for them (a flight recorder whose metadata filled its limit, or a burst "
                         + "that outran the ring)")
        }
        if lost & Lost.eventsKept != 0 {
            lines.append("the flight recorder could not keep every open span's begin and every mark name's latest mark "
                         + "(more than an eighth of CALLTRACE_LIMIT, 1,024 open spans or 256 mark names): some were "
                         + "overwritten with the oldest events")
        }
        if lost & Lost.early != 0 {
            lines.append("calls made before the runtime started are not in the trace: a .preinit_array function, which "
                         + "the loader runs before any constructor, ran instrumented code")
        }
        if lost & ~Lost.known != 0 {
            lines.append("records were lost for a reason this calltrace does not know (lost bits "
                         + "\(TextFormat.hex(lost & ~Lost.known))); a newer calltrace may say more")
        }
        return lines
    }

    /// The `lost` bit an errno explains: ENOSPC and EDQUOT a full file system, EFBIG the size
    /// limit, anything else a failed mapping; when that bit is not set, the first space bit that is.
    private static func spaceBit(forErrno code: UInt32, lost: UInt32) -> UInt32 {
        typealias Lost = TraceFormat.Lost
        let candidates: [UInt32] = [Lost.noSpace, Lost.fileLimit, Lost.mapFailed]
        let natural: UInt32
        switch Int32(clamping: code) {
        case ENOSPC, EDQUOT: natural = Lost.noSpace
        case EFBIG: natural = Lost.fileLimit
        default: natural = Lost.mapFailed
        }
        if lost & natural != 0 { return natural }
        return candidates.first { lost & $0 != 0 } ?? 0
    }
}
