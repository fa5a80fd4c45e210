/// The numbers of the on-disk format (docs/trace-format.md), defined once for the reader.
///
/// The runtime's copy is `CShims/runtime/ct_format.h`; `FormatConstantsTests` parses that header
/// and fails when the two disagree, so neither side can change alone.
public enum TraceFormat {
    /// `CT_MAGIC`: "CALLTRC" and its terminating NUL.
    public static let magic: [UInt8] = Array("CALLTRC\0".utf8)
    /// `CT_HEADER_SIZE`: the file header, also the offset of the first block.
    public static let headerSize = 4096
    /// `sizeof(struct ct_file_header)`: the bytes of the header that hold fields; the rest is zero.
    public static let headerFieldsSize = 296
    /// `CT_BLOCK_HEADER_SIZE`.
    public static let blockHeaderSize = 32
    public static let blockMagic: [UInt8] = Array("CTBK".utf8)
    /// `CT_STREAM_EVENTS`: a flight recorder's events (marks, frames, spans, run delays, hangs),
    /// in a stream of their own whose blocks are reused; without a limit they are in stream 0.
    public static let eventsStream: UInt32 = 0xFFFF_FFFF

    /// Streams the runtime writes itself (metadata and events), not a thread's calls.
    public static func isRuntimeStream(_ stream: UInt32) -> Bool { stream == 0 || stream == eventsStream }
    /// The version this reader understands; a higher one is rejected.
    public static let version = 4

    /// Byte offsets of the file header's fields (`struct ct_file_header`).
    public enum HeaderOffset {
        public static let magic = 0
        public static let version = 8
        public static let reserved = 10
        public static let headerSize = 12
        public static let blockSize = 16
        public static let flags = 20
        public static let pid = 24
        public static let thresholdNs = 32
        public static let thresholdTicks = 40
        public static let calibTick0 = 48
        public static let calibNs0 = 56
        public static let calibTick1 = 64
        public static let calibNs1 = 72
        public static let realtimeNs0 = 80
        public static let processStartNs = 88
        public static let initTick = 96
        public static let mainTick = 104
        public static let mainAddress = 112
        public static let drops = 120
        public static let endTick = 128
        public static let threadsMode = 136
        public static let maxDepth = 140
        public static let nextBlock = 144
        public static let signal = 152
        public static let nestedDrops = 160
        public static let lost = 168
        public static let lostErrno = 172
        public static let overheadPairTicks = 176
        public static let overheadOwnTicks = 184
        public static let muteMode = 192
        public static let mutedCount = 196
        public static let schedPeriodUs = 200
        public static let schedFlags = 204
        public static let frameIntervalNs = 208
        public static let hangThresholdNs = 216
        public static let hangCount = 224
        public static let hangFlags = 228
        /// Written by the CLI (`calltrace symbolize`, `record`), never by the runtime, whose header
        /// struct ends before them: where the stored symbol table is, and its size (0: none).
        public static let symbolsOffset = 232
        public static let symbolsSize = 240
        /// The flight recorder (`CALLTRACE_LIMIT`): the file's size limit, 0 for none, and what
        /// reusing blocks once it was full gave up.
        public static let limit = 248
        public static let overwrittenBlocks = 256
        public static let overwrittenCalls = 264
        /// How the program was instrumented (`Instrument` bits), the functions of the modules that
        /// registered sleds, and those whose sleds could not be patched in.
        public static let instrument = 272
        public static let sledFunctions = 276
        public static let sledsUnpatched = 280
        /// The calibrated cost of a call its handlers chose not to time (u32 ticks).
        public static let overheadUntimedTicks = 284
        /// Calls that may have been slow, lost to muting (`Lost.muting`); 0 from an older runtime,
        /// which counted them in `drops`.
        public static let mutingDrops = 288
    }

    /// The header's `instrument` bits: the mechanisms that timed the calls (docs/design.md, "Sleds").
    public enum Instrument {
        /// -finstrument-functions' hooks ran.
        public static let hooks: UInt32 = 1 << 0
        /// Modules built with sleds registered them with the runtime.
        public static let sleds: UInt32 = 1 << 1
    }

    /// The stored symbol table appended to a trace (docs/trace-format.md, "Stored symbols").
    public enum SymbolTable {
        public static let magic: [UInt8] = Array("CTSYMTAB".utf8)
        public static let version: UInt32 = 1
        /// magic, u32 version, u32 flags, u64 body size, u64 body checksum (FNV-1a 64).
        public static let headerSize = 32
        /// Flag bit 0: source files and lines were looked up (an entry without one has none).
        public static let linesFlag: UInt32 = 1 << 0
        /// A reader reads no larger table (a crafted size must not cost gigabytes).
        public static let maxSize = 1 << 30
    }

    /// Byte offsets of the block header's fields (`struct ct_block_header`).
    public enum BlockOffset {
        public static let magic = 0
        public static let used = 4
        public static let stream = 8
        public static let flags = 12
        public static let tid = 16
        public static let seq = 24
    }

    /// The header's `flags` (`CT_FILE_*`).
    public enum FileFlag {
        public static let closed: UInt32 = 1 << 0
        public static let tsc: UInt32 = 1 << 1
        public static let crashed: UInt32 = 1 << 2
    }

    /// The header's `sched_flags` (`CT_SCHED_*`): what the thread-state sampler could do.
    public enum SchedFlag {
        /// schedstat was sampled: THREAD_STATE records (before version 4, RUN_DELAY records, and a
        /// call that overlaps none did not wait for a CPU).
        public static let sampled: UInt32 = 1 << 0
        /// No schedstat file (a kernel without CONFIG_SCHED_INFO, or /proc hidden): nothing was sampled.
        public static let unavailable: UInt32 = 1 << 1
        /// Some recording threads were not sampled (too many at once).
        public static let partial: UInt32 = 1 << 2
        /// Some thread's `/proc/.../syscall` could not be read: what it was blocked in is unknown.
        public static let stateUnreadable: UInt32 = 1 << 3
    }

    /// A THREAD_STATE record's kind (`CT_STATE_*`).
    public enum ThreadState {
        public static let running: UInt64 = 0
        public static let syscall: UInt64 = 1
        public static let kernel: UInt64 = 2
        public static let unknown: UInt64 = 3
    }

    /// The header's `hang_flags` (`CT_HANG_*`): what the hang watchdog could do.
    public enum HangFlag {
        /// libunwind could not be loaded: stacks hold the instrumented calls only.
        public static let unavailable: UInt32 = 1 << 0
        /// The program handles, ignores or blocks the capture signal: it was left alone.
        public static let signalOwned: UInt32 = 1 << 1
        /// A hang was seen but its record was lost.
        public static let dropped: UInt32 = 1 << 2
        /// Some stacks were taken without a signal (`TraceHang.isPartial`).
        public static let partial: UInt32 = 1 << 3
    }

    /// A HANG record's own flags (`CT_HANG_REC_*`).
    public enum HangRecordFlag {
        /// No signal was sent: the stack is the syscall's pc, then the open instrumented calls.
        public static let partial: UInt64 = 1 << 0
        /// The capture interrupted a wait, which the handler resumed as it would have run.
        public static let resumed: UInt64 = 1 << 1
    }

    /// `CT_HANG_MAX_PCS`: a HANG record holds at most this many pcs.
    public static let hangMaxPCs = 128

    /// A block header's `flags` (`CT_BLOCK_*`).
    public enum BlockFlag {
        public static let sealed: UInt32 = 1 << 0
    }

    /// Record tags (`CT_REC_*`). Bit 7 set: a sized record, a varint body length follows the tag.
    public enum Tag {
        public static let sizedBit: UInt8 = 0x80
        /// CALL is a compact kind: its low nibble is the kind, bits 4-6 its flags.
        public static let call: UInt8 = 0x01
        /// A CALL with a last varint: the calls beneath it that its handlers did not time.
        public static let callUntimed: UInt8 = 0x02
        public static let compactKindMask: UInt8 = 0x0f
        public static let module: UInt8 = 0x81
        public static let moduleGone: UInt8 = 0x82
        public static let process: UInt8 = 0x83
        public static let thread: UInt8 = 0x84
        public static let segment: UInt8 = 0x85
        public static let muted: UInt8 = 0x86
        public static let runDelay: UInt8 = 0x87
        public static let mark: UInt8 = 0x88
        public static let frame: UInt8 = 0x89
        public static let hang: UInt8 = 0x8A
        public static let spanBegin: UInt8 = 0x8B
        public static let spanPoint: UInt8 = 0x8C
        public static let spanEnd: UInt8 = 0x8D
        public static let markAt: UInt8 = 0x8E
        public static let filter: UInt8 = 0x8F
        public static let threadState: UInt8 = 0x90
        public static let restricted: UInt8 = 0x91
    }

    /// A RESTRICTED record's step and answer (`CT_RESTRICT_*`).
    public enum Restriction {
        public static let strict: UInt64 = 1
        public static let filter: UInt64 = 2
        public static let filterAll: UInt64 = 3
        public static let tsc: UInt64 = 4
        public static let timedOn: UInt64 = 0
        public static let clockCall: UInt64 = 1
        public static let stopped: UInt64 = 2
        public static let stoppedAll: UInt64 = 3
    }

    /// A CALL tag's flag bits (`CT_CALL_*`).
    public enum CallFlag {
        public static let unfinished: UInt8 = 1 << 4
        public static let unwound: UInt8 = 1 << 5
        /// A sixth varint follows: the number of timed calls beneath the call (overhead compensation).
        public static let descendants: UInt8 = 1 << 6
        public static let mask: UInt8 = 0x70
    }

    /// The MUTED record's `how` bits (`HOW_*` in ct_mute.c).
    public enum MuteHow {
        public static let patched: UInt64 = 1 << 0
        public static let inHook: UInt64 = 1 << 1
        /// What was patched out is the function's sleds (docs/design.md, "Sleds"): nothing of the
        /// instrumentation is left in its code but a jump at entry.
        public static let sleds: UInt64 = 1 << 2
        /// It was muted for running hot on threads that do not record, never on one that does.
        public static let unrecorded: UInt64 = 1 << 3
        /// Muted only inside its own calls (a recursion's inner calls): the record ends with the
        /// level from which its calls are not timed (docs/design.md, "Adaptive muting").
        public static let levels: UInt64 = 1 << 4
    }

    /// The header's `lost` bits (`CT_LOST_*`): why records were lost or recording stopped.
    public enum Lost {
        /// A burst of calls outran the block ring (`CALLTRACE_BUFFER`).
        public static let ringEmpty: UInt32 = 1 << 0
        /// The file system had no room for the trace (ENOSPC or EDQUOT reserving a block).
        public static let noSpace: UInt32 = 1 << 1
        /// The file size limit (RLIMIT_FSIZE) was reached.
        public static let fileLimit: UInt32 = 1 << 2
        /// A block could not be mapped (out of memory or mappings).
        public static let mapFailed: UInt32 = 1 << 3
        /// The drain thread could not run: only the blocks prepared at start were used.
        public static let noDrain: UInt32 = 1 << 4
        /// The main thread's open calls could not be recorded when another thread ended the process.
        public static let mainAtExit: UInt32 = 1 << 5
        /// The command line was too long for the PROCESS record and was cut.
        public static let argsCut: UInt32 = 1 << 6
        /// Marks, frames or span events were dropped: the runtime's queue of them was full (`calltrace.h`).
        public static let marks: UInt32 = 1 << 7
        /// A slow call that began while its function was being muted lost its exit hook (the
        /// runtime could not see it open), so it was not recorded.
        public static let muting: UInt32 = 1 << 8
        /// A metadata record (a module, a thread's name, a mark...) found no block ready: the
        /// metadata stream's writer never waits for one.
        public static let metadata: UInt32 = 1 << 9
        /// A flight recorder could not keep an open span's begin or a mark name's latest mark for
        /// good (more than an eighth of its limit, or than it tracks): once their block was reused
        /// they were gone.
        public static let eventsKept: UInt32 = 1 << 10
        /// Instrumented code ran before the runtime started (a `.preinit_array` function, which the
        /// loader runs before any constructor): its calls and marks were not recorded.
        public static let early: UInt32 = 1 << 11
        public static let known: UInt32 = (1 << 12) - 1
    }
}
