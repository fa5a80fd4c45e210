/// A loaded ELF image (executable, shared library, dlopen'ed library) as the runtime saw it.
///
/// Addresses are run-time addresses of the traced process. `base` is the load bias
/// (`dlpi_addr`): run-time address = ELF virtual address + base.
public struct TraceModule: Equatable, Sendable {
    /// The path as the runtime recorded it: bytes, not necessarily UTF-8. Files are opened by
    /// these bytes; `path` is for showing.
    public var pathBytes: [UInt8]
    /// `pathBytes` as text, with U+FFFD for bytes that are not UTF-8; setting it sets `pathBytes`.
    public var path: String {
        get { String(decoding: pathBytes, as: UTF8.self) }
        set { pathBytes = Array(newValue.utf8) }
    }
    public var base: UInt64
    /// Run-time address range of the module's PT_LOAD segments, `lo..<hi`.
    public var lo: UInt64
    public var hi: UInt64
    public var buildID: [UInt8]
    /// Tick at which the runtime first saw the module loaded.
    public var seenTick: Ticks
    /// Tick at which the module was unloaded (`dlclose`), if it was.
    public var goneTick: Ticks?
    /// `seenTick` as unix time, when the trace's clock is known (`TraceReader` fills it in). A
    /// module without a build-id whose file was modified after this is not the file that was
    /// loaded: `Symbolicator` then gives no names from it.
    public var seenTime: Nanoseconds?
    /// The names the trace stores for this module's addresses (`calltrace symbolize`), which
    /// `Symbolicator` prefers to the ELF file's; nil when the trace stores none.
    public var storedSymbols: StoredSymbols?

    /// Decodes a MODULE record's body (docs/trace-format.md).
    init(from body: inout ByteCursor) throws {
        let (base, lo, hi, seen, buildID, path) = try body.read(UInt64.self, UInt64.self, UInt64.self, Ticks.self,
                                                                 [UInt8].self, [UInt8].self)
        self.init(pathBytes: path, base: base, lo: lo, hi: hi, buildID: buildID, seenTick: seen)
    }

    /// A MODULE_GONE record: the module mapped at `base` from `lo` was unloaded at `tick`.
    struct Gone {
        var base: UInt64
        var lo: UInt64
        var tick: Ticks

        init(from body: inout ByteCursor) throws {
            (base, lo, tick) = try body.read(UInt64.self, UInt64.self, Ticks.self)
        }
    }

    public init(path: String, base: UInt64, lo: UInt64, hi: UInt64, buildID: [UInt8],
                seenTick: Ticks, goneTick: Ticks? = nil, seenTime: Nanoseconds? = nil) {
        self.init(pathBytes: Array(path.utf8), base: base, lo: lo, hi: hi, buildID: buildID,
                  seenTick: seenTick, goneTick: goneTick, seenTime: seenTime)
    }

    public init(pathBytes: [UInt8], base: UInt64, lo: UInt64, hi: UInt64, buildID: [UInt8],
                seenTick: Ticks, goneTick: Ticks? = nil, seenTime: Nanoseconds? = nil) {
        self.pathBytes = pathBytes
        self.base = base
        self.lo = lo
        self.hi = hi
        self.buildID = buildID
        self.seenTick = seenTick
        self.goneTick = goneTick
        self.seenTime = seenTime
    }

    public func contains(_ address: UInt64) -> Bool { address >= lo && address < hi }

    public var buildIDHex: String { TextFormat.hexDigits(buildID) }

    /// The file name, for `module+0xoffset` names.
    public var name: String { path.split(separator: "/").last.map(String.init) ?? path }
}
