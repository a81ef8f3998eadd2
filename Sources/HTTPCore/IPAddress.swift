#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address in 16 bytes: IPv4 as the IPv4-mapped IPv6 address `::ffff:a.b.c.d`,
/// so a dual-stack socket's peers and plain IPv4 peers compare equal. A value type of two words:
/// hashing and comparing it allocates nothing.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// The first and last eight bytes, in network order (most significant byte first).
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Sixteen bytes in network order, inline (no allocation).
    package typealias Bytes = (
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
    )
    package static var zeroBytes: Bytes { (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) }

    /// The address of 16 bytes in network order.
    package init(bytes: Bytes) {
        var bytes = bytes
        let (high, low) = withUnsafeBytes(of: &bytes) { raw in
            (
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
        self.init(high: high, low: low)
    }

    /// Whether this is an IPv4 address (stored IPv4-mapped).
    public var isIPv4: Bool { high == 0 && low >> 32 == 0xFFFF }

    /// The address with everything after the first 64 bits cleared for IPv6 (one subnet, what a
    /// single client usually holds), unchanged for IPv4.
    public var clientPrefix: IPAddress { isIPv4 ? self : IPAddress(high: high, low: 0) }

    /// Parses a bare IPv4 (`192.0.2.1`) or IPv6 (`2001:db8::1`) address, as `inet_pton` reads
    /// them; nil for anything else (ports, brackets, zones, spaces, more than 45 bytes).
    public init?<Bytes: Collection>(text: Bytes) where Bytes.Element == UInt8 {
        guard !text.isEmpty, text.count <= 45 else { return nil }
        var isIPv6 = false
        for byte in text {
            switch byte {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "."): break
            case UInt8(ascii: "a") ... UInt8(ascii: "f"), UInt8(ascii: "A") ... UInt8(ascii: "F"), UInt8(ascii: ":"):
                isIPv6 = true
            default: return nil
            }
        }
        var cString = [CChar](repeating: 0, count: text.count + 1)
        for (offset, byte) in text.enumerated() { cString[offset] = CChar(bitPattern: byte) }
        var bytes = Self.zeroBytes
        let parsed = withUnsafeMutableBytes(of: &bytes) { raw -> Bool in
            if isIPv6 { return inet_pton(AF_INET6, cString, raw.baseAddress) == 1 }
            raw[10] = 0xFF
            raw[11] = 0xFF
            return inet_pton(AF_INET, cString, raw.baseAddress! + 12) == 1
        }
        guard parsed else { return nil }
        self.init(bytes: bytes)
    }

    /// `init(text:)` for a `String`.
    public init?(_ text: String) { self.init(text: Array(text.utf8)) }

    /// Dotted quad for IPv4, RFC 5952 form for IPv6.
    public var description: String {
        var bytes = (high.bigEndian, low.bigEndian)
        var text = [CChar](repeating: 0, count: 64)
        let family = isIPv4 ? AF_INET : AF_INET6
        withUnsafeBytes(of: &bytes) { raw in
            _ = inet_ntop(family, raw.baseAddress! + (isIPv4 ? 12 : 0), &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension HTTPRequest {
    /// The client the request is from: the peer's address, or, when the peer is
    /// `trustedProxy`, the address that proxy appended to `X-Forwarded-For` (the last entry of
    /// the last such header: entries before it came from the client and prove nothing). A
    /// missing or malformed last entry from the proxy gives the proxy's own address. Nil only
    /// when the request has no peer address (a request value made in a test).
    /// Cost: no allocation unless the peer is the trusted proxy; then one pass over the headers.
    public func clientAddress(trustedProxy: IPAddress?) -> IPAddress? {
        guard let peer = peerAddress else { return nil }
        guard let trustedProxy, peer == trustedProxy else { return peer }
        var last: Int?
        for position in headers.indices where headers.name(at: position, equals: "x-forwarded-for") { last = position }
        guard let last else { return peer }
        return headers.withValue(at: last) { $0.flatMap(Self.lastForwardedAddress) } ?? peer
    }

    /// The last comma-separated entry of an `X-Forwarded-For` value, without the spaces and tabs
    /// around it, as an address; nil when it is not a bare IPv4 or IPv6 address.
    static func lastForwardedAddress(_ value: UnsafeRawBufferPointer) -> IPAddress? {
        var end = value.count
        while end > 0, value[end - 1] == UInt8(ascii: " ") || value[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        var start = end
        while start > 0, value[start - 1] != UInt8(ascii: ",") { start -= 1 }
        while start < end, value[start] == UInt8(ascii: " ") || value[start] == UInt8(ascii: "\t") { start += 1 }
        return IPAddress(text: value[start ..< end])
    }

    /// ``lastForwardedAddress(_:)`` for bytes in an array (the fuzz target and tests).
    public static func lastForwardedAddress(in value: [UInt8]) -> IPAddress? {
        value.withUnsafeBytes { lastForwardedAddress($0) }
    }
}
