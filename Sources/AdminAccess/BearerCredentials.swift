/// The token of an `Authorization: Bearer <token>` field (RFC 6750 §2.1, RFC 9110 §11.4): the
/// scheme compared without case, one or more spaces, then a `token68` (letters, digits and
/// `-._~+/`, then any `=`). Whitespace around the value is ignored (libmicrohttpd keeps the
/// trailing part).
///
/// Cost: one pass over the value; no allocation but the token's bytes.
package enum BearerCredentials: Sendable, Equatable {
    /// No `Authorization` field.
    case missing
    /// A field that is not a bearer token; `reason` says what is wrong, never quoting the value.
    case malformed(reason: String)
    case token([UInt8])

    /// The longest token read: longer ones are malformed (a token file's tokens are shorter).
    package static let maxTokenLength = AdminTokens.maxTokenLength

    package init(authorization value: String?) {
        guard let value else {
            self = .missing
            return
        }
        var bytes = Array(value.utf8)[...]
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        let scheme = bytes.prefix { $0 != 0x20 }
        guard scheme.count == 6, scheme.map({ $0 | 0x20 }) == Array("bearer".utf8) else {
            self = .malformed(reason: "the Authorization scheme must be Bearer")
            return
        }
        var token = bytes.dropFirst(scheme.count)
        guard token.first == 0x20 else {
            self = .malformed(reason: "Bearer must be followed by a space and the token")
            return
        }
        while token.first == 0x20 { token.removeFirst() }
        guard !token.isEmpty else {
            self = .malformed(reason: "the bearer token is empty")
            return
        }
        guard token.count <= Self.maxTokenLength else {
            self = .malformed(reason: "the bearer token is longer than \(Self.maxTokenLength) bytes")
            return
        }
        guard Self.isToken68(token) else {
            self = .malformed(
                reason: "a bearer token is letters, digits and - . _ ~ + / followed by any = (RFC 6750)")
            return
        }
        self = .token(Array(token))
    }

    /// RFC 7235 `token68`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
    package static func isToken68(_ bytes: some Collection<UInt8>) -> Bool {
        let body = bytes.prefix { $0 != UInt8(ascii: "=") }
        guard !body.isEmpty, bytes.dropFirst(body.count).allSatisfy({ $0 == UInt8(ascii: "=") }) else { return false }
        return body.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "A") ... UInt8(ascii: "Z"),
                UInt8(ascii: "0") ... UInt8(ascii: "9"):
                true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"),
                UInt8(ascii: "/"):
                true
            default: false
            }
        }
    }
}
