/// A session's id: 128 bits from the system's secure random source, written as 22 characters of
/// base64url (`A-Z a-z 0-9 - _`, no padding).
///
/// Invariant: `text` always parses back to the same id; only canonical 22-character forms parse.
package struct SessionID: Sendable, Hashable, CustomStringConvertible {
    package let high: UInt64
    package let low: UInt64

    /// A fresh id from `SystemRandomNumberGenerator` (getrandom(2) on Linux).
    package static func random() -> SessionID {
        var generator = SystemRandomNumberGenerator()
        return SessionID(high: generator.next(), low: generator.next())
    }

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Parses the 22-character text form; nil for anything else.
    package init?(_ text: some StringProtocol) {
        var text = String(text)
        guard let parsed = text.withUTF8({ Self.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = parsed
    }

    /// Parses the 22-byte UTF-8 text form (a header value as received); nil for anything else.
    package init?(utf8 bytes: UnsafeRawBufferPointer) {
        guard let parsed = Self.parse(bytes) else { return nil }
        self = parsed
    }

    /// The id in 22 bytes of base64url, or nil. 22 × 6 = 132 bits: the last character carries
    /// 2 bits of data and 4 zero bits.
    private static func parse(_ utf8: UnsafeRawBufferPointer) -> SessionID? {
        guard utf8.count == 22 else { return nil }
        return decodeTable.withUnsafeBufferPointer { table -> SessionID? in
            var high: UInt64 = 0
            var low: UInt64 = 0
            for position in 0 ..< 21 {
                let value = table[Int(utf8[position])]
                guard value != invalid else { return nil }
                high = (high << 6) | (low >> 58)
                low = (low << 6) | UInt64(value)
            }
            let last = table[Int(utf8[21])]
            guard last != invalid, last & 0b1111 == 0 else { return nil }
            high = (high << 2) | (low >> 62)
            low = (low << 2) | UInt64(last >> 4)
            return SessionID(high: high, low: low)
        }
    }

    /// The id in 22 bytes of base64url (what ``init(_:)`` parses).
    package var text: String {
        String(unsafeUninitializedCapacity: 22) { buffer in
            encode(into: buffer)
            return 22
        }
    }

    /// The 22 bytes of ``text``, without making a `String` (a Redis key, say).
    package var utf8: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 22) { buffer, count in
            encode(into: buffer)
            count = 22
        }
    }

    /// Writes the 22 base64url bytes into `buffer` (22 bytes at least): bits 127...0 as 6-bit
    /// groups from the top, the last group 2 data bits then 4 zero bits.
    private func encode(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        Self.alphabet.withUnsafeBufferPointer { alphabet in
            var high = high
            var low = low
            for position in 0 ..< 22 {
                buffer[position] = alphabet[Int(truncatingIfNeeded: high >> 58)]
                high = high << 6 | low >> 58
                low <<= 6
            }
        }
    }

    package var description: String { text }

    /// Hashed by its `high` half alone. The ids a store holds are the server's own (``random()``),
    /// so their 64 high bits already are a uniform hash; a client may send any id, but an unknown
    /// one is only looked up, never stored, so no client can fill a bucket with ids it chose.
    /// `low` is left out because ``SessionTable`` shards by it, and every id in one shard shares
    /// its low bits.
    package func hash(into hasher: inout Hasher) { hasher.combine(high) }

    /// What `Set` and `Dictionary` use to place an id: ``high`` mixed with their seed, without
    /// running SipHash over bits that are random already (a session lookup, under a shard's lock,
    /// on every request).
    package func _rawHashValue(seed: Int) -> Int { Int(truncatingIfNeeded: high) ^ seed }

    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// The 6-bit value of each base64url byte; ``invalid`` for every other byte.
    static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()
    static let invalid: UInt8 = 0xFF
}
