import HTTPCore

/// The CORS headers of one request, read from its (client-controlled) header fields: its
/// `Origin`, and for a preflight the `Access-Control-Request-Method` and
/// `Access-Control-Request-Headers` it asks about.
///
/// Invariant: ``origin`` is the one `Origin` value sent (nil when none was, or when two differ:
/// such a request gets no grant); ``requestedMethod`` is a token (RFC 9110 §5.6.2) sent once;
/// ``requestedHeaders`` are lowercase tokens, in order, without duplicates. A malformed
/// preflight header makes ``isMalformedPreflight`` true and grants nothing; it is never an error
/// answer (the browser refuses the preflight either way).
/// Cost: one pass over the request's header names; only the three CORS headers' values are read.
package struct CrossOriginRequest: Sendable, Equatable {
    package var origin: [UInt8]?
    package var requestedMethod: String?
    package var requestedHeaders: [String] = []
    package var isMalformedPreflight = false

    /// A request's CORS headers; a lowercase name list is what ``HTTPRequest/headers`` holds.
    package init(headers: HTTPFields) {
        var origins = 0
        var methods = 0
        for position in headers.indices {
            if headers.name(at: position, equals: "origin") {
                origins += 1
                let value = headers.withValue(at: position) { $0.map { Array($0) } ?? [] }
                if origins == 1 { origin = value } else if origin != value { origin = nil }
            } else if headers.name(at: position, equals: "access-control-request-method") {
                methods += 1
                let value = headers.withValue(at: position) { $0.map { Array($0) } ?? [] }
                if methods == 1, !value.isEmpty, value.allSatisfy(Self.isTokenByte) {
                    requestedMethod = String(decoding: value, as: UTF8.self)
                } else {
                    requestedMethod = nil
                    isMalformedPreflight = true
                }
            } else if headers.name(at: position, equals: "access-control-request-headers") {
                let value = headers.withValue(at: position) { $0.map { Array($0) } ?? [] }
                if let names = Self.headerNames(in: value) {
                    for name in names where !requestedHeaders.contains(name) { requestedHeaders.append(name) }
                } else {
                    isMalformedPreflight = true
                }
            }
        }
    }

    /// Whether the request is a CORS preflight: `OPTIONS` with an `Origin` and an
    /// `Access-Control-Request-Method` header (well formed or not).
    package static func isPreflight(_ request: HTTPRequest) -> Bool {
        request.method == "OPTIONS" && request.headers.firstIndex(named: "origin") != nil
            && request.headers.firstIndex(named: "access-control-request-method") != nil
    }

    /// The field names of one `Access-Control-Request-Headers` value, lowercased: a
    /// comma-separated list of tokens with optional spaces and tabs around each (empty elements
    /// are skipped, RFC 9110 §5.6.1); nil when an element is not a token. At most 64 names.
    package static func headerNames(in value: [UInt8]) -> [String]? {
        var names: [String] = []
        for element in value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let trimmed = element.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
                .reversed()
            if trimmed.isEmpty { continue }
            guard trimmed.allSatisfy(isTokenByte), names.count < 64 else { return nil }
            names.append(String(decoding: trimmed.map(asciiLowercased), as: UTF8.self))
        }
        return names
    }

    /// A `tchar` of RFC 9110 §5.6.2.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "A") ... UInt8(ascii: "Z"),
            UInt8(ascii: "0") ... UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
