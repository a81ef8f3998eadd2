import MenuModel

/// Appends JSON text to a byte buffer. Strings are written as UTF-8 with only the escapes JSON
/// requires (`"`, `\`, control characters), so non-ASCII text passes through unescaped.
struct JSONWriter {
    var bytes: [UInt8]

    init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always) mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    @inline(__always) mutating func raw(_ other: ArraySlice<UInt8>) {
        other.withUnsafeBufferPointer { bytes.append(contentsOf: $0) }
    }

    @inline(__always) mutating func raw(_ other: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: other) }

    mutating func integer(_ value: Int) {
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // Digits least significant first, then reversed in place: no intermediate buffer.
        let start = bytes.count
        var magnitude = value.magnitude
        while magnitude > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        }
        bytes[start...].reverse()
    }

    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for (offset, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start ..< offset]))
                start = offset + 1
                switch byte {
                case UInt8(ascii: "\""): raw("\\\"")
                case UInt8(ascii: "\\"): raw("\\\\")
                case 0x0A: raw("\\n")
                case 0x0D: raw("\\r")
                case 0x09: raw("\\t")
                case 0x08: raw("\\b")
                case 0x0C: raw("\\f")
                default:
                    raw("\\u00")
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0xF)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): bool(flag)
        case .integer(let number): bytes.append(contentsOf: String(number).utf8)
        case .number(let number): bytes.append(contentsOf: Self.format(number).utf8)
        case .string(let text): string(text)
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members): object(members)
        }
    }

    /// Writes an object with keys in sorted order, so equal objects encode identically.
    mutating func object(_ members: [String: JSONValue]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, key) in members.keys.sorted().enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(key)
            bytes.append(UInt8(ascii: ":"))
            value(members[key]!)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The shortest text that reads back as `number` (Swift's description), in JSON syntax.
    static func format(_ number: Double) -> String {
        number.isFinite ? number.description : "null"
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
