/// A streaming JSON writer over a `ByteOutput`: it puts the commas between members and elements
/// and closes what it opened, so a view says what it writes (`beginObject`, `key`, a value,
/// `endObject`) and never counts brackets. Values go straight into the output through the
/// `ByteOutput` JSON pieces (`JSONOutput.swift`); the only storage is one flag per open container,
/// in an array that grows with the nesting and not with the values.
///
/// ```
/// var json = JSONWriter(output)
/// json.beginObject()
/// json.key("frames"); json.integer(240)
/// json.key("notes"); json.beginArray(); json.string("late"); json.endArray()
/// json.endObject()   // {"frames":240,"notes":["late"]}
/// ```
public struct JSONWriter {
    public let output: ByteOutput
    /// Whether the innermost open container already holds a member or element (the next needs a comma).
    private var hasMembers = false
    /// The same flag of each enclosing container, outermost first.
    private var enclosing: [Bool] = []
    /// A key was just written: its value follows with no comma.
    private var afterKey = false

    public init(_ output: ByteOutput) {
        self.output = output
        enclosing.reserveCapacity(16)
    }

    /// How many containers are open.
    public var depth: Int { enclosing.count }

    /// The comma before a member or element that is not the container's first.
    @inline(__always)
    private mutating func separate() {
        if afterKey {
            afterKey = false
        } else if hasMembers {
            output.write(byte: UInt8(ascii: ","))
        }
        hasMembers = true
    }

    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    @inline(__always)
    private mutating func open(_ bracket: UInt8) {
        separate()
        output.write(byte: bracket)
        enclosing.append(hasMembers)
        hasMembers = false
    }

    @inline(__always)
    private mutating func close(_ bracket: UInt8) {
        output.write(byte: bracket)
        hasMembers = enclosing.popLast() ?? true
    }

    /// `"key":` in the open object; the next value is the member's.
    public mutating func key(_ key: StaticString) {
        separate()
        output.writeJSONKey(key)
        afterKey = true
    }

    /// `"key":` for a key made at run time (escaped).
    public mutating func key(_ key: String) {
        separate()
        output.writeJSONString(key)
        output.write(byte: UInt8(ascii: ":"))
        afterKey = true
    }

    public mutating func string(_ value: String) {
        separate()
        output.writeJSONString(value)
    }

    /// A string literal of the program's own that needs no escaping (`"evented"`, `"O"`).
    public mutating func string(static value: StaticString) {
        separate()
        output.write(byte: UInt8(ascii: "\""))
        output.write(static: value)
        output.write(byte: UInt8(ascii: "\""))
    }

    public mutating func integer<Value: BinaryInteger>(_ value: Value) {
        separate()
        output.writeInteger(value)
    }

    public mutating func bool(_ value: Bool) {
        separate()
        output.write(static: value ? "true" : "false")
    }

    public mutating func null() {
        separate()
        output.write(static: "null")
    }

    /// Milliseconds with `decimals` places, as `ByteOutput.writeMilliseconds` writes them.
    public mutating func milliseconds(_ time: Nanoseconds, decimals: Int = 6) {
        separate()
        output.writeMilliseconds(time, decimals: decimals)
    }

    /// A value already encoded as JSON (a name encoded once and written many times).
    public mutating func encoded(_ bytes: UnsafeBufferPointer<UInt8>) {
        separate()
        output.write(bytes)
    }

    public mutating func encoded(_ bytes: [UInt8]) {
        separate()
        output.write(bytes)
    }

    /// Members already encoded as JSON (`"a":1,"b":2`, no braces), in the open object: the
    /// fields of a function, encoded once and written with each of its calls.
    public mutating func encodedMembers(_ bytes: UnsafeBufferPointer<UInt8>) {
        if hasMembers { output.write(byte: UInt8(ascii: ",")) }
        output.write(bytes)
        hasMembers = true
    }

    /// A line break between documents (JSON lines) or after the last; only outside any container.
    public mutating func endLine() {
        output.write(byte: UInt8(ascii: "\n"))
        hasMembers = false
        afterKey = false
    }

    /// `"key":value` members in one call, for the common pairs.
    public mutating func member(_ name: StaticString, _ value: String) { key(name); string(value) }
    public mutating func member(_ name: StaticString, static value: StaticString) { key(name); string(static: value) }
    public mutating func member<Value: BinaryInteger>(_ name: StaticString, _ value: Value) { key(name); integer(value) }
    public mutating func member(_ name: StaticString, milliseconds value: Nanoseconds) { key(name); milliseconds(value) }
    public mutating func member(_ name: StaticString, _ value: Bool) { key(name); bool(value) }

    /// `"function":NAME,"start_ms":S,"cost_ms":C`: a call as `timeline` and `hitches` list it, in
    /// an object the caller opens and closes.
    mutating func callMembers(_ name: String, start: Instant, cost: Nanoseconds) {
        member("function", name)
        member("start_ms", milliseconds: start.sinceStart)
        member("cost_ms", milliseconds: cost)
    }
}
