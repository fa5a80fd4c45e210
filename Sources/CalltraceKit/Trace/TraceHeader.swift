/// The 4096-byte file header (docs/trace-format.md, "File header").
public struct TraceHeader: Equatable, Sendable {
    public static let magic = TraceFormat.magic
    public static let size = TraceFormat.headerSize
    public static let supportedVersion = TraceFormat.version

    public var version: UInt16
    public var headerSize: UInt32
    public var blockSize: UInt32
    public var flags: UInt32
    public var pid: UInt64
    public var thresholdNs: UInt64
    public var thresholdTicks: Ticks
    public var calibTick0: Ticks
    public var calibNs0: UInt64
    public var calibTick1: Ticks
    public var calibNs1: UInt64
    public var realtimeNs0: UInt64
    /// CLOCK_MONOTONIC ns; 0 if unknown.
    public var processStartNs: UInt64
    public var initTick: Ticks
    /// 0 if unknown.
    public var mainTick: Ticks
    public var mainAddress: UInt64
    public var drops: UInt64
    /// 0 if the process did not exit normally.
    public var endTick: Ticks
    public var threadsMode: UInt32
    public var maxDepth: UInt32
    /// The file offset the runtime's block allocator hands out next: no block starts at or after it.
    public var nextBlock: UInt64
    public var signal: UInt64
    /// Records dropped because a signal handler interrupted a record write on its thread.
    public var nestedDrops: UInt64
    /// Why records were lost or recording stopped: `TraceFormat.Lost` bits.
    public var lost: UInt32
    /// The errno of the runtime's first failure to get space for the trace; 0 if none.
    public var lostErrno: UInt32
    /// Overhead compensation (version 2): what one timed call's hooks cost its caller, and the part
    /// of a call's own hooks inside its measured time. 0 in older traces (nothing was taken out).
    public var overheadPairTicks: Ticks
    public var overheadOwnTicks: Ticks
    /// Adaptive muting: 0 unknown (an older runtime), 1 off, 2 auto, 3 hook (`MutedFunction.modeText`).
    public var muteMode: UInt32
    /// Functions muted (their MUTED records name them).
    public var mutedCount: UInt32
    /// The run-delay sampler's period in microseconds; 0 when no sampler ran (an older runtime).
    public var schedPeriodUs: UInt32
    /// What the run-delay sampler could do: `TraceFormat.SchedFlag` bits.
    public var schedFlags: UInt32
    /// The target interval between frames in ns (`CALLTRACE_FRAME`); 0 from an older runtime.
    public var frameIntervalNs: UInt64
    /// CALLTRACE_HANG in ns; 0 when the hang watchdog was off (or an older runtime).
    public var hangThresholdNs: UInt64
    /// HANG records written.
    public var hangCount: UInt32
    /// What the hang watchdog could do: `TraceFormat.HangFlag` bits.
    public var hangFlags: UInt32
    /// Where the stored symbol table starts (`calltrace symbolize`); 0 when there is none.
    public var symbolsOffset: UInt64
    /// Its size in bytes; 0 when there is none.
    public var symbolsSize: UInt64
    /// CALLTRACE_LIMIT in bytes: the file never grew past it (a flight recorder); 0: no limit.
    public var limit: UInt64
    /// Blocks of calls reused once the file was full, and the CALL records they held.
    public var overwrittenBlocks: UInt64
    public var overwrittenCalls: UInt64
    /// The mechanisms that timed the calls: `TraceFormat.Instrument` bits (0 from an older runtime,
    /// which had the hooks only).
    public var instrument: UInt32
    /// Functions of the modules built with sleds, and how many of them ran untimed because their
    /// sleds could not be patched in.
    public var sledFunctions: UInt32
    public var sledsUnpatched: UInt32
    /// Overhead compensation for the calls the sleds' handlers chose not to time (inside a
    /// recursion): their calibrated cost each (0 if not calibrated).
    public var overheadUntimedTicks: Ticks
    /// Calls that may have been slow, lost because their function's exit hooks went while they ran
    /// (`Lost.muting`). As written: see `callsLostToMuting`.
    public var mutingDrops: UInt64

    public var closedCleanly: Bool { flags & TraceFormat.FileFlag.closed != 0 }
    public var usesTSC: Bool { flags & TraceFormat.FileFlag.tsc != 0 }
    public var crashed: Bool { flags & TraceFormat.FileFlag.crashed != 0 }
    public var tracesAllThreads: Bool { threadsMode == 1 }

    /// The `lost` bits that explain `drops`: a thread had no block to write to.
    static let blockDropReasons = TraceFormat.Lost.ringEmpty | TraceFormat.Lost.noSpace | TraceFormat.Lost.fileLimit
        | TraceFormat.Lost.mapFailed | TraceFormat.Lost.noDrain
    /// A runtime before `muting_drops` counted the calls lost to muting in `drops`: when muting is
    /// the only reason the header gives for them, those drops are its.
    private var dropsAreMutings: Bool {
        mutingDrops == 0 && lost & TraceFormat.Lost.muting != 0 && lost & Self.blockDropReasons == 0
    }
    /// Calls dropped because their thread had no block to write to.
    public var callsDroppedForBlocks: UInt64 { dropsAreMutings ? 0 : drops }
    /// Calls that may have been slow, lost to muting.
    public var callsLostToMuting: UInt64 { dropsAreMutings ? drops : mutingDrops }

    /// Parses and validates the header at the start of `cursor`'s buffer, which holds the
    /// file's first bytes (all 4096 of them when the file has them).
    public init(from cursor: inout ByteCursor) throws {
        guard cursor.remaining > 0 else { throw TraceError.emptyFile }
        let available = cursor.remaining
        let magicLength = min(available, TraceHeader.magic.count)
        for index in 0..<magicLength {
            guard try cursor.readU8() == TraceHeader.magic[index] else { throw TraceError.notATrace }
        }
        guard available >= TraceHeader.size else { throw TraceError.truncatedHeader(size: available) }
        let fields = Fields(bytes: cursor.bytes, base: cursor.offset - magicLength)
        typealias At = TraceFormat.HeaderOffset
        version = try fields.u16(At.version)
        guard Int(version) <= TraceHeader.supportedVersion else { throw TraceError.newerVersion(Int(version)) }
        headerSize = try fields.u32(At.headerSize)
        blockSize = try fields.u32(At.blockSize)
        flags = try fields.u32(At.flags)
        pid = try fields.u64(At.pid)
        thresholdNs = try fields.u64(At.thresholdNs)
        thresholdTicks = Ticks(try fields.u64(At.thresholdTicks))
        calibTick0 = Ticks(try fields.u64(At.calibTick0))
        calibNs0 = try fields.u64(At.calibNs0)
        calibTick1 = Ticks(try fields.u64(At.calibTick1))
        calibNs1 = try fields.u64(At.calibNs1)
        realtimeNs0 = try fields.u64(At.realtimeNs0)
        processStartNs = try fields.u64(At.processStartNs)
        initTick = Ticks(try fields.u64(At.initTick))
        mainTick = Ticks(try fields.u64(At.mainTick))
        mainAddress = try fields.u64(At.mainAddress)
        drops = try fields.u64(At.drops)
        endTick = Ticks(try fields.u64(At.endTick))
        threadsMode = try fields.u32(At.threadsMode)
        maxDepth = try fields.u32(At.maxDepth)
        nextBlock = try fields.u64(At.nextBlock)
        signal = try fields.u64(At.signal)
        nestedDrops = try fields.u64(At.nestedDrops)
        lost = try fields.u32(At.lost)
        lostErrno = try fields.u32(At.lostErrno)
        overheadPairTicks = Ticks(try fields.u64(At.overheadPairTicks))
        overheadOwnTicks = Ticks(try fields.u64(At.overheadOwnTicks))
        muteMode = try fields.u32(At.muteMode)
        mutedCount = try fields.u32(At.mutedCount)
        schedPeriodUs = try fields.u32(At.schedPeriodUs)
        schedFlags = try fields.u32(At.schedFlags)
        frameIntervalNs = try fields.u64(At.frameIntervalNs)
        hangThresholdNs = try fields.u64(At.hangThresholdNs)
        hangCount = try fields.u32(At.hangCount)
        hangFlags = try fields.u32(At.hangFlags)
        symbolsOffset = try fields.u64(At.symbolsOffset)
        symbolsSize = try fields.u64(At.symbolsSize)
        limit = try fields.u64(At.limit)
        overwrittenBlocks = try fields.u64(At.overwrittenBlocks)
        overwrittenCalls = try fields.u64(At.overwrittenCalls)
        instrument = try fields.u32(At.instrument)
        sledFunctions = try fields.u32(At.sledFunctions)
        sledsUnpatched = try fields.u32(At.sledsUnpatched)
        overheadUntimedTicks = Ticks(UInt64(try fields.u32(At.overheadUntimedTicks)))
        mutingDrops = try fields.u64(At.mutingDrops)
        try cursor.skip(TraceHeader.size - magicLength)
        guard Int(headerSize) == TraceHeader.size else {
            throw TraceError.badHeader("header size \(headerSize), expected \(TraceHeader.size)")
        }
        guard blockSize >= 4096, blockSize % 4096 == 0 else {
            throw TraceError.badHeader("block size \(blockSize) is not a positive multiple of 4096")
        }
    }

    /// Reads a field at its offset from the header's start, so each offset is written once, in
    /// `TraceFormat.HeaderOffset`.
    private struct Fields {
        let bytes: UnsafeRawBufferPointer
        let base: Int

        func u16(_ offset: Int) throws -> UInt16 { var c = cursor(offset); return try c.readU16() }
        func u32(_ offset: Int) throws -> UInt32 { var c = cursor(offset); return try c.readU32() }
        func u64(_ offset: Int) throws -> UInt64 { var c = cursor(offset); return try c.readU64() }
        private func cursor(_ offset: Int) -> ByteCursor { ByteCursor(bytes, start: base + offset) }
    }
}
