/// A HANG record: the main thread had been inside a call without entering or leaving a timed call
/// for at least the hang threshold (`TraceHeader.hangThresholdNs`), and this is its native stack
/// at `capturedTick` (docs/design.md, "Hangs").
public struct TraceHang: Equatable, Sendable {
    public var stream: UInt32
    public var tid: UInt64
    /// When the stack was taken.
    public var capturedTick: Ticks
    /// The hung call: the innermost call open on the thread, its start, function and depth.
    public var callStartTick: Ticks
    public var function: UInt64
    public var depth: UInt32
    /// How long the thread had made no hook activity when the stack was taken (seen by the
    /// watchdog's passes, so at most one pass, up to 8 ms, short of the truth).
    public var quietTicks: Ticks
    /// `TraceFormat.HangRecordFlag` bits.
    public var flags: UInt64
    /// Innermost first, each an address to look up as it is: the first is where the thread was,
    /// the others lie inside each caller's call instruction. A partial stack holds the syscall's
    /// address (when known) and then the open instrumented functions' entry addresses.
    public var pcs: [UInt64]

    public init(stream: UInt32, tid: UInt64, capturedTick: Ticks, callStartTick: Ticks, function: UInt64,
                depth: UInt32, quietTicks: Ticks, flags: UInt64, pcs: [UInt64]) {
        self.stream = stream
        self.tid = tid
        self.capturedTick = capturedTick
        self.callStartTick = callStartTick
        self.function = function
        self.depth = depth
        self.quietTicks = quietTicks
        self.flags = flags
        self.pcs = pcs
    }

    /// Taken without a signal (the thread waited where a signal would have cut its wait short, or
    /// the program owns the signal): uninstrumented frames other than the syscall's are missing.
    public var isPartial: Bool { flags & TraceFormat.HangRecordFlag.partial != 0 }
    /// The capture interrupted a wait, which went on as it would have without it.
    public var resumedWait: Bool { flags & TraceFormat.HangRecordFlag.resumed != 0 }

    /// Decodes a HANG record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let stream = try body.readVarint()
        guard let stream32 = UInt32(exactly: stream), stream32 != 0 else { throw RecordError.badStream(stream) }
        self.stream = stream32
        tid = try body.readVarint()
        capturedTick = Ticks(try body.readVarint())
        callStartTick = Ticks(try body.readVarint())
        function = try body.readVarint()
        let depth = try body.readVarint()
        guard let depth32 = UInt32(exactly: depth), depth32 <= CallRecord.maxDepth else {
            throw RecordError.badDepth(offset: body.offset)
        }
        self.depth = depth32
        quietTicks = Ticks(try body.readVarint())
        flags = try body.readVarint()
        let count = try body.readVarint()
        // Each pc takes at least one byte: a huge count fails here, not on memory.
        guard count <= UInt64(TraceFormat.hangMaxPCs), count <= UInt64(body.remaining) else {
            throw RecordError.badPCCount(count)
        }
        pcs = try (0..<Int(count)).map { _ in try body.readVarint() }
    }
}
