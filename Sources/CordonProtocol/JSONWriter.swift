/// Writes compact JSON exactly as `VarlinkJSONEncoder` does, for the wire types that write
/// themselves (`JSONWritable`): members in declaration order, an absent optional left out, an
/// integral double written without a fraction, strings escaped the same way.
public struct JSONWriter {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8]
    /// Bit `d`: the container at depth `d` has a member already (the next needs a comma).
    private var hasMember: UInt64 = 0
    private var depth = 0
    /// A key was just written: its value needs no comma.
    private var afterKey = false

    /// A writer with room for `capacity` bytes.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard depth > 0 else { return }
        let bit: UInt64 = 1 << UInt64(depth - 1)
        if hasMember & bit != 0 { bytes.append(UInt8(ascii: ",")) } else { hasMember |= bit }
    }

    private mutating func open(_ opener: UInt8) {
        separate()
        bytes.append(opener)
        depth += 1
        precondition(depth <= 64, "JSONWriter nests at most 64 containers")
        hasMember &= ~(1 << UInt64(depth - 1))
    }

    /// Opens an object.
    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    /// Closes the innermost object.
    public mutating func endObject() {
        depth -= 1
        bytes.append(UInt8(ascii: "}"))
    }
    /// Opens an array.
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    /// Closes the innermost array.
    public mutating func endArray() {
        depth -= 1
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes the key of the next member of the current object.
    public mutating func key(_ name: String) {
        separate()
        JSONOutput.appendString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// Writes a string value.
    public mutating func value(_ string: String) {
        separate()
        JSONOutput.appendString(string, to: &bytes)
    }

    /// Writes a Boolean value.
    public mutating func value(_ flag: Bool) {
        separate()
        bytes.append(contentsOf: flag ? JSONOutput.trueBytes : JSONOutput.falseBytes)
    }

    /// Writes an integer value.
    public mutating func value(_ number: some FixedWidthInteger) {
        separate()
        JSONOutput.appendInteger(number, to: &bytes)
    }

    /// Writes a double; a non-finite one is an error, as in `VarlinkJSONEncoder`.
    public mutating func value(_ number: Double, key: String) throws {
        separate()
        try JSONOutput.appendDouble(number, to: &bytes, path: [JSONKey(key)])
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        bytes.append(contentsOf: JSONOutput.nullBytes)
    }

    /// Writes member `name` with a string value; nothing when `value` is nil.
    public mutating func member(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        self.value(value)
    }

    /// Writes member `name` with a Boolean value; nothing when `value` is nil.
    public mutating func member(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        self.value(value)
    }

    /// Writes member `name` with an integer value; nothing when `value` is nil.
    public mutating func member(_ name: String, _ value: Int?) {
        guard let value else { return }
        key(name)
        self.value(value)
    }

    /// Writes member `name` with a double value; nothing when `value` is nil.
    public mutating func member(_ name: String, _ value: Double?) throws {
        guard let value else { return }
        key(name)
        try self.value(value, key: name)
    }

    /// Writes member `name` with an array of strings; nothing when `values` is nil.
    public mutating func member(_ name: String, _ values: [String]?) {
        guard let values else { return }
        key(name)
        beginArray()
        for value in values { self.value(value) }
        endArray()
    }

    /// Writes member `name` with an array of integers; nothing when `values` is nil.
    public mutating func member(_ name: String, _ values: [Int]?) {
        guard let values else { return }
        key(name)
        beginArray()
        for value in values { self.value(value) }
        endArray()
    }

    /// Writes member `name` with a value that writes itself; nothing when `value` is nil.
    public mutating func member(_ name: String, _ value: (some JSONWritable)?) throws {
        guard let value else { return }
        key(name)
        try value.writeJSON(to: &self)
    }
}

/// A coding key naming the member a non-finite double was refused at.
struct JSONKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
