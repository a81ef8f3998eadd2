import HTTPCore
import MenuModel

/// Appends JSON text to a ``ResponseBodyWriter``. Strings are written as UTF-8 with only the
/// escapes JSON requires (`"`, `\`, control characters), so non-ASCII text passes through unescaped.
///
/// Invariant: only ever holds what the calls wrote, in order; ``finish()`` hands the bytes to a
/// response body without a copy. Every append is a bounds check plus a memory copy.
struct JSONWriter: ~Copyable {
    private var buffer: ResponseBodyWriter

    init(capacity: Int = 256) {
        buffer = ResponseBodyWriter(capacity: capacity)
    }

    /// Bytes written so far.
    var count: Int { buffer.count }
    /// Bytes that can still be written before the buffer has to grow.
    var spareCapacity: Int { buffer.spareCapacity }

    /// A copy of the bytes written so far.
    var bytes: [UInt8] { buffer.bytes }

    /// The bytes as a response body (moved, not copied).
    consuming func finish() -> ResponseBody { buffer.finish() }

    @inline(__always) mutating func raw(_ text: StaticString) {
        buffer.append(text)
    }

    @inline(__always) mutating func raw(_ other: [UInt8]) {
        buffer.append(other)
    }

    @inline(__always) mutating func raw(_ other: UnsafeBufferPointer<UInt8>) {
        buffer.append(UnsafeRawBufferPointer(other))
    }

    @inline(__always) mutating func raw(_ other: UnsafeRawBufferPointer) {
        buffer.append(other)
    }

    /// Lets `write` store at most `maxBytes` bytes at the end and keeps the count it returns.
    @inline(__always) mutating func raw(atMost maxBytes: Int, _ write: (UnsafeMutableRawPointer) -> Int) {
        buffer.append(atMost: maxBytes, write)
    }

    @inline(__always) mutating func integer(_ value: Int) {
        buffer.appendDecimal(value)
    }

    @inline(__always) mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    mutating func string(_ value: String) {
        buffer.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for (offset, byte) in utf8.enumerated()
            where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                raw(UnsafeBufferPointer(rebasing: utf8[start ..< offset]))
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
                    buffer.append(Self.hexDigits[Int(byte >> 4)])
                    buffer.append(Self.hexDigits[Int(byte & 0xF)])
                }
            }
            raw(UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        buffer.append(UInt8(ascii: "\""))
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): bool(flag)
        case .integer(let number): integer(Int(number))
        case .number(let number):  // as written: JSONNumber's invariant is JSON number text
            var text = number.text
            text.withUTF8 { raw($0) }
        case .string(let text): string(text)
        case .array(let values):
            buffer.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                self.value(element)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let members): object(members)
        }
    }

    /// Writes an object with keys in sorted order, so equal objects encode identically.
    mutating func object(_ members: [String: JSONValue]) {
        buffer.append(UInt8(ascii: "{"))
        for (index, key) in members.keys.sorted().enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            string(key)
            buffer.append(UInt8(ascii: ":"))
            value(members[key]!)
        }
        buffer.append(UInt8(ascii: "}"))
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
