import CNettle

/// The SHA-256 digest of a bearer token (Nettle): what a token is compared by, so a comparison
/// takes the same time whatever the candidate's length, and what its log fingerprint is cut from,
/// so no log line holds a token or anything a token can be recovered from.
///
/// Invariant: 32 bytes. Cost: one SHA-256 over the token (under a microsecond for 64 bytes).
package struct TokenDigest: Sendable, Equatable {
    package let bytes: [UInt8]

    package init(of token: some Collection<UInt8>) {
        var context = sha256_ctx()
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_SIZE))
        let input = Array(token)
        nettle_sha256_init(&context)
        input.withUnsafeBufferPointer { nettle_sha256_update(&context, $0.count, $0.baseAddress) }
        digest.withUnsafeMutableBufferPointer { nettle_sha256_digest(&context, $0.count, $0.baseAddress) }
        bytes = digest
    }

    /// `sha256:` and the digest's first 6 bytes in hex: names a token in logs and metrics.
    package var fingerprint: String {
        let hex = Array("0123456789abcdef".utf8)
        var text = Array("sha256:".utf8)
        for byte in bytes.prefix(6) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether the two digests are equal, looking at every byte whatever differs first.
    package func matches(_ other: TokenDigest) -> Bool {
        var difference: UInt8 = 0
        for (a, b) in zip(bytes, other.bytes) { difference |= a ^ b }
        return difference == 0 && bytes.count == other.bytes.count
    }
}
