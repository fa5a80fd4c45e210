/// The 4096-byte file header (docs/trace-format.md, "File header").
public struct TraceHeader: Equatable, Sendable {
    public static let magic: [UInt8] = Array("CALLTRC\0".utf8)
    public static let size = 4096
    public static let supportedVersion = 1

    public var version: UInt16
    public var headerSize: UInt32
    public var blockSize: UInt32
    public var flags: UInt32
    public var pid: UInt64
    public var thresholdNs: UInt64
    public var thresholdTicks: UInt64
    public var calibTick0: UInt64
    public var calibNs0: UInt64
    public var calibTick1: UInt64
    public var calibNs1: UInt64
    public var realtimeNs0: UInt64
    /// CLOCK_MONOTONIC ns; 0 if unknown.
    public var processStartNs: UInt64
    public var initTick: UInt64
    /// 0 if unknown.
    public var mainTick: UInt64
    public var mainAddress: UInt64
    public var drops: UInt64
    /// 0 if the process did not exit normally.
    public var endTick: UInt64
    public var threadsMode: UInt32
    public var maxDepth: UInt32
    public var nextBlock: UInt64
    public var signal: UInt64
    /// Records dropped because a signal handler interrupted a record write on its thread.
    public var nestedDrops: UInt64

    public var closedCleanly: Bool { flags & 1 != 0 }
    public var usesTSC: Bool { flags & 2 != 0 }
    public var crashed: Bool { flags & 4 != 0 }
    public var tracesAllThreads: Bool { threadsMode == 1 }

    /// Parses and validates the header at the cursor's position.
    public init(from cursor: inout ByteCursor) throws {
        guard cursor.remaining > 0 else { throw TraceError.emptyFile }
        let available = cursor.remaining
        let magicLength = min(available, TraceHeader.magic.count)
        for index in 0..<magicLength {
            guard try cursor.readU8() == TraceHeader.magic[index] else { throw TraceError.notATrace }
        }
        guard available >= TraceHeader.size else { throw TraceError.truncatedHeader(size: available) }
        version = try cursor.readU16()
        guard Int(version) <= TraceHeader.supportedVersion else { throw TraceError.newerVersion(Int(version)) }
        _ = try cursor.readU16()
        headerSize = try cursor.readU32()
        blockSize = try cursor.readU32()
        flags = try cursor.readU32()
        pid = try cursor.readU64()
        thresholdNs = try cursor.readU64()
        thresholdTicks = try cursor.readU64()
        calibTick0 = try cursor.readU64()
        calibNs0 = try cursor.readU64()
        calibTick1 = try cursor.readU64()
        calibNs1 = try cursor.readU64()
        realtimeNs0 = try cursor.readU64()
        processStartNs = try cursor.readU64()
        initTick = try cursor.readU64()
        mainTick = try cursor.readU64()
        mainAddress = try cursor.readU64()
        drops = try cursor.readU64()
        endTick = try cursor.readU64()
        threadsMode = try cursor.readU32()
        maxDepth = try cursor.readU32()
        nextBlock = try cursor.readU64()
        signal = try cursor.readU64()
        nestedDrops = try cursor.readU64()
        guard Int(headerSize) == TraceHeader.size else {
            throw TraceError.badHeader("header size \(headerSize), expected \(TraceHeader.size)")
        }
        guard blockSize >= 4096, blockSize % 4096 == 0 else {
            throw TraceError.badHeader("block size \(blockSize) is not a positive multiple of 4096")
        }
    }
}
