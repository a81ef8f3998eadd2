#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One HTTP request as handed to an ``HTTPServer`` handler.
///
/// Invariant: every field is an owned Swift copy; nothing refers to
/// libmicrohttpd's memory, so the value may be kept and sent anywhere.
/// Header names are lowercased (the initialisers lowercase them) and both
/// `headers` and `query` keep the order, and the duplicates, of the wire.
public struct HTTPRequest: Sendable {
    /// The request method exactly as sent, e.g. `"GET"`, `"POST"`.
    public var method: String
    /// The URL path as libmicrohttpd gives it: percent-decoded, without the query string (made
    /// into a `String` when read; ``path(is:)`` compares without making one).
    public var path: String {
        get { pathField.value(at: 0) ?? "" }
        set { pathField = HTTPFields([(name: "", value: newValue)]) }
    }
    /// The path's bytes: the value of the one field here (in the server's path, sharing the
    /// request's field storage with `query` and `headers`).
    var pathField: HTTPFields
    /// Every query argument in order, duplicates kept; a value is `nil` for `?flag` (no `=`).
    public var query: HTTPFields
    /// Every request header in order, duplicates kept; names lowercased.
    public var headers: HTTPFields
    /// The complete request body (de-chunked when it was sent chunked).
    public var body: [UInt8]
    /// The address of the connection's peer (a proxy, when there is one; see
    /// ``clientAddress(trustedProxy:)``); nil when the server could not tell.
    public var peerAddress: IPAddress?

    /// Makes a request value; header names are lowercased to keep the type's invariant.
    public init(
        method: String,
        path: String,
        query: [(name: String, value: String?)] = [],
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        peerAddress: IPAddress? = nil
    ) {
        self.method = method
        pathField = HTTPFields([(name: "", value: path)])
        self.query = HTTPFields(query)
        self.headers = HTTPFields(headers.map { (name: $0.name.lowercased(), value: $0.value) })
        self.body = body
        self.peerAddress = peerAddress
    }

    /// Makes a request value from fields already copied, header names already lowercase, and the
    /// path as the value of `pathField`'s one field (the server's path).
    package init(
        method: String, pathField: HTTPFields, query: HTTPFields, lowercasedHeaders: HTTPFields, body: [UInt8],
        peerAddress: IPAddress?
    ) {
        self.method = method
        self.pathField = pathField
        self.query = query
        self.headers = lowercasedHeaders
        self.body = body
        self.peerAddress = peerAddress
    }

    /// Calls `body` with the path's bytes (as ``path`` holds them, before any `String` is made),
    /// valid only during the call.
    public func withPathBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try pathField.withValue(at: 0) { path in try body(path ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
    }

    /// Whether the path is exactly `text`, byte for byte (no `String` is made).
    public func path(is text: String) -> Bool {
        pathField.withValue(at: 0) { path in
            guard let path else { return false }
            return text.utf8.withContiguousStorageIfAvailable { text in
                text.count == path.count
                    && (text.isEmpty || memcmp(text.baseAddress!, path.baseAddress!, text.count) == 0)
            } ?? path.elementsEqual(text.utf8)
        }
    }

    /// The value of the first header called `name`, compared case-insensitively (ASCII), or `nil`.
    public func header(_ name: String) -> String? {
        for header in headers where asciiCaseInsensitiveEquals(header.name, name) {
            return header.value ?? ""
        }
        return nil
    }
}

/// One HTTP response produced by a handler or a rejection callback.
///
/// Invariant: none beyond the field types; the server validates when sending.
/// When it is sent, the server:
/// - lets libmicrohttpd write `Content-Length` (a `Content-Length` given here is ignored) and `Date`;
/// - sends every other header in order; a header with an empty value is left out (libmicrohttpd
///   0.9.75 cannot send one);
/// - sends neither body nor `Content-Length` for 204; for 304 and for `HEAD` requests sends the
///   headers only, with the `Content-Length` of `body`;
/// - replaces the response by a plain-text 500 naming the problem when `status` is not in
///   200...599 (a final status RFC 9110 defines) or a header cannot be sent (CR/LF/NUL in it,
///   space in a name, a `Transfer-Encoding` other than `chunked`).
public struct HTTPResponse: Sendable {
    /// Where the body bytes live.
    package enum Payload: Sendable {
        /// A Swift array; libmicrohttpd gets a copy.
        case array([UInt8])
        /// A finished ``ResponseBody``; libmicrohttpd sends it in place.
        case body(ResponseBody)
        /// Bytes written while the response is sent (chunked), until the body is finished.
        case stream(StreamedBody)
    }

    /// The status code, e.g. 200.
    public var status: Int
    /// Response headers in the order they are sent.
    public var headers: [(name: String, value: String)]
    package var payload: Payload

    /// The body bytes (a copy when the response was made from a ``ResponseBody``; none for a
    /// streamed body, whose bytes are written while it is sent).
    public var body: [UInt8] {
        get {
            switch payload {
            case .array(let bytes): bytes
            case .body(let body): body.bytes
            case .stream: []
            }
        }
        set { payload = .array(newValue) }
    }

    /// The body's length in bytes, without copying it (0 for a streamed body: not known).
    public var bodyCount: Int {
        switch payload {
        case .array(let bytes): bytes.count
        case .body(let body): body.count
        case .stream: 0
        }
    }

    /// The streamed body, when the response has one.
    package var streamedBody: StreamedBody? {
        if case .stream(let body) = payload { body } else { nil }
    }

    /// Makes a response value whose body the server copies when it sends it.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.payload = .array(body)
    }

    /// Makes a response value whose body the server sends without copying it.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: ResponseBody) {
        self.status = status
        self.headers = headers
        self.payload = .body(body)
    }

    /// Makes a response whose body is written while it is sent (`Transfer-Encoding: chunked`),
    /// until `stream` is finished or closed.
    package init(status: Int, headers: [(name: String, value: String)] = [], stream: StreamedBody) {
        self.status = status
        self.headers = headers
        self.payload = .stream(stream)
    }
}

/// A framing or request-head problem the server detects itself, before (and instead of) calling
/// the handler.
///
/// The server asks the `rejection` callback for the response to send and always sends it with
/// `Connection: close`: after a framing problem the rest of the connection's bytes cannot be trusted.
public enum HTTPRejection: Sendable, Equatable {
    /// The body is larger than ``HTTPServerConfiguration/maxBodyBytes``: declared by
    /// `Content-Length`, or found while a chunked body streams in.
    case payloadTooLarge(limit: Int)
    /// Two `Content-Length` headers that differ, or a later one that is not a non-negative decimal
    /// number, or a header named `Content-Length` plus whitespace or more characters (a space before
    /// the colon, an obs-fold line glued on), which libmicrohttpd would ignore for framing.
    /// (A malformed *first* `Content-Length` is answered by libmicrohttpd itself with 400.)
    case conflictingContentLength
    /// `Content-Length` together with `Transfer-Encoding`: the classic request-smuggling shape.
    case contentLengthWithChunked
    /// A `Transfer-Encoding` other than a single header whose whole value is `chunked` (any case;
    /// `chunked ` with trailing whitespace, `gzip, chunked`, two headers are all refused), or a
    /// header named `Transfer-Encoding` plus whitespace or more characters (answer 501: the body
    /// cannot be framed as every reader of the headers would frame it).
    case unsupportedTransferEncoding
    /// `Transfer-Encoding` in an HTTP/1.0 request, which RFC 9112 §6.1 calls faulty framing.
    case transferEncodingInHTTP10
    /// More than one `Host` header (RFC 9112 §3.2).
    case duplicateHost
    /// No `Host` header in a request of HTTP/1.1 or later (RFC 9112 §3.2).
    case missingHost
    /// Whitespace or a control byte in the raw request target (`GET /rows x HTTP/1.1`).
    case invalidRequestTarget
    /// A header name (given, at most 64 characters of it) that is not a token (RFC 9110 §5.6.2):
    /// whitespace before the colon, an obs-fold continuation line that libmicrohttpd glued onto
    /// the name (`X-A: a` folded with ` Content-Length: 5` arrives as `X-AContent-Length: 5`), a
    /// control or non-ASCII byte.
    case malformedHeaderName(String)
    /// The server is stopping: past its grace period it answers every request with this, without
    /// handling it, and closes the connection (answer 503 with `Retry-After`: another instance,
    /// or this one restarted, serves the retry).
    case serverStopping
    /// A streamed response for a peer address that holds `limit` streams already (the server's
    /// per-address connection limit, which taken-over streams no longer count against in
    /// libmicrohttpd): answer 429.
    case tooManyStreamsFromAddress(limit: Int)
}

/// ASCII case-insensitive equality without allocating.
package func asciiCaseInsensitiveEquals(_ lhs: String, _ rhs: String) -> Bool {
    var left = lhs.utf8.makeIterator()
    var right = rhs.utf8.makeIterator()
    while true {
        switch (left.next(), right.next()) {
        case (nil, nil):
            return true
        case let (a?, b?):
            if asciiLowercased(a) != asciiLowercased(b) { return false }
        default:
            return false
        }
    }
}

@inline(__always)
package func asciiLowercased(_ byte: UInt8) -> UInt8 {
    (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
}

/// Copies `count` bytes with ASCII letters lowercased, eight bytes per step (a few word
/// operations, see ``asciiLowercased(word:)``): a header name costs two or three steps, in a few
/// dozen bytes of code where a vectorised byte loop took a kilobyte.
package func copyASCIILowercased(from source: UnsafeRawPointer, to target: UnsafeMutableRawPointer, count: Int) {
    guard count >= 8 else {
        for offset in 0 ..< count {
            target.storeBytes(
                of: asciiLowercased(source.load(fromByteOffset: offset, as: UInt8.self)),
                toByteOffset: offset, as: UInt8.self)
        }
        return
    }
    var offset = 0
    while offset < count &- 8 {
        let word = source.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        target.storeBytes(of: asciiLowercased(word: word), toByteOffset: offset, as: UInt64.self)
        offset &+= 8
    }
    // The last eight bytes, overlapping what the loop wrote when count is not a multiple of 8.
    let last = source.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
    target.storeBytes(of: asciiLowercased(word: last), toByteOffset: count &- 8, as: UInt64.self)
}

/// The eight bytes of `word` with `A`...`Z` turned into `a`...`z` and every other byte kept.
/// Each byte's low seven bits plus a constant sets its top bit exactly when it is at least `A`
/// (or at least `[`); the sums stay below 256, so no carry crosses into the next byte.
@inline(__always)
package func asciiLowercased(word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let topBits = ones &* 0x80
    let sevenBits = word & ~topBits
    let atLeastA = sevenBits &+ ones &* (0x80 - 0x41)
    let atLeastBracket = sevenBits &+ ones &* (0x80 - 0x5B)
    let isUpper = atLeastA & ~atLeastBracket & ~word & topBits
    return word | (isUpper &>> 2)
}
