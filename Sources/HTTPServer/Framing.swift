// What the request head says about the body, decided on the first access-handler call, before
// the handler may run: the headers that frame the body, collected from libmicrohttpd's list, and
// the rules that accept a request only when libmicrohttpd 0.9.75 frames its body as the headers
// say to any reader of HTTP/1.1.
//
// How 0.9.75 frames a request body (found by sending raw requests to it): when any header is
// named `Transfer-Encoding` (any case), the body is chunked if the *first* such header's value is
// `chunked` compared case-insensitively over the whole value, which keeps trailing whitespace
// ("chunked " is not chunked); otherwise the body is read until the connection closes, and a
// pipelined request is swallowed as body. `Content-Length` is then ignored. Without
// `Transfer-Encoding` the first `Content-Length` frames the body (a malformed one gets 0.9.75's own
// 400). It chunks HTTP/1.0 bodies too. It glues an obs-fold continuation line onto the header
// *name* (`Transfer-Encoding: chunked` + ` gzip` becomes a header `Transfer-Encodinggzip`, a
// folded `X-A: a` + ` Content-Length: 5` a header `X-AContent-Length: 5`), keeps whitespace before
// the colon in the name, and ends a value at a NUL byte. A header line whose name is empty or
// starts with NUL it drops unseen. With MHD_OPTION_STRICT_FOR_CLIENT 0 it does not require `Host`:
// the check below does (RFC 9112 §3.2), and answers in JSON where libmicrohttpd wrote HTML.

import CMicroHTTPD
import HTTPCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The request headers framing looks at, collected from libmicrohttpd's header list.
///
/// Invariant: `fields` holds, in wire order and with names lowercased, exactly the headers whose
/// name starts with `content-length` or `transfer-encoding` (any case; the near misses included);
/// `hostCount` counts the headers named `host` (any case); `malformedName` is the first other name
/// that is not a token: a space, tab, colon, control or non-ASCII byte in it (at most 64 characters
/// of it). Cost: nothing is allocated for a request without framing headers or malformed names;
/// every header name is scanned once.
package struct FramingHeaders {
    package var fields: [(name: String, value: String)] = []
    package var hostCount = 0
    package var malformedName: String? = nil

    package init(fields: [(name: String, value: String)] = [], hostCount: Int = 0, malformedName: String? = nil) {
        self.fields = fields
        self.hostCount = hostCount
        self.malformedName = malformedName
    }

    /// The framing headers among `headers` (names and values as libmicrohttpd hands them over),
    /// collected as the first access-handler call does (the fuzz target and tests start here).
    package init(collecting headers: [(name: [UInt8], value: [UInt8])]) {
        var head = FramingHeaders()
        for header in headers {
            // NUL-terminated, as libmicrohttpd keeps them (and never a nil pointer for an empty one).
            let name = (header.name + [0]).map { CChar(bitPattern: $0) }
            let value = (header.value + [0]).map { CChar(bitPattern: $0) }
            _ = withUnsafeMutablePointer(to: &head) { head in
                mhdCollectFramingHeader(
                    UnsafeMutableRawPointer(head), .HEADER_KIND, name, header.name.count,
                    value, header.value.count)
            }
        }
        self = head
    }
}

/// What the request headers say about the body, decided before the handler may run.
package enum Framing: Equatable {
    /// Fine; `declaredLength` is the `Content-Length`, `nil` for chunked or no body.
    case accept(declaredLength: Int?)
    /// Answer with the rejection callback's response, then close.
    case reject(HTTPRejection)

    /// Checks the framing headers (names already lowercased) of a request of HTTP/1.0
    /// (`isHTTP10`) or a later version: names, then `Host`, then the body's framing. Accepts a
    /// body only when libmicrohttpd frames it as every reader of the headers would; refuses
    /// everything else.
    package static func check(_ head: FramingHeaders, isHTTP10: Bool = false, maxBodyBytes: Int) -> Framing {
        if let name = head.malformedName { return .reject(.malformedHeaderName(name)) }
        if head.hostCount > 1 { return .reject(.duplicateHost) }
        if head.hostCount == 0, !isHTTP10 { return .reject(.missingHost) }
        var lengths: [String] = []
        var encodings: [String] = []
        for header in head.fields {
            if header.name == "content-length" {
                lengths.append(header.value)
            } else if header.name == "transfer-encoding" {
                encodings.append(header.value)
            } else if header.name.hasPrefix("content-length") {
                // A near miss that libmicrohttpd 0.9.75 ignores for framing: whitespace before the
                // colon stays in the name ("Content-Length : 5"), an obs-fold continuation line is
                // glued onto it ("Content-Length6"). A front end that reads it as Content-Length
                // would frame the body differently (request smuggling), so refuse it as invalid.
                lengths.append("")
            } else if header.name.hasPrefix("transfer-encoding") {
                encodings.append("")  // the same near miss ("Transfer-Encoding : chunked"): never "chunked"
            }
        }
        if !lengths.isEmpty, !encodings.isEmpty {
            return .reject(.contentLengthWithChunked)
        }
        if !encodings.isEmpty {
            // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 means faulty framing.
            if isHTTP10 { return .reject(.transferEncodingInHTTP10) }
            // Exactly libmicrohttpd's test, on one header: no trimming ("chunked " is not chunked
            // for it), no list ("gzip, chunked" is not either).
            guard encodings.count == 1, asciiCaseInsensitiveEquals(encodings[0], "chunked") else {
                return .reject(.unsupportedTransferEncoding)
            }
            return .accept(declaredLength: nil)
        }
        var declared: Int? = nil
        for text in lengths {
            guard let value = parseContentLength(text) else { return .reject(.conflictingContentLength) }
            if let earlier = declared, earlier != value { return .reject(.conflictingContentLength) }
            declared = value
        }
        if let declared, declared > maxBodyBytes {
            return .reject(.payloadTooLarge(limit: maxBodyBytes))
        }
        return .accept(declaredLength: declared)
    }

    /// 1*DIGIT after trimming spaces/tabs; saturates at `Int.max` (any such value is over every limit).
    /// (libmicrohttpd itself refuses a first `Content-Length` with trailing whitespace; a later
    /// equal one with it frames the same body, so it is accepted.)
    static func parseContentLength(_ text: String) -> Int? {
        let digits = trimmedOWS(text).utf8
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 0x30))
            value = (overflow1 || overflow2) ? Int.max : sum
        }
        return value
    }

    private static func trimmedOWS(_ text: String) -> Substring {
        let isOWS: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = text.firstIndex(where: { !isOWS($0) }) else { return "" }
        let end = text.lastIndex(where: { !isOWS($0) })!
        return text[start ... end]
    }
}

/// `MHD_KeyValueIteratorN` filling the ``FramingHeaders`` that `cls` points at: `Host` counted,
/// names starting with `content-length` or `transfer-encoding` (any case) kept lowercased with
/// their values, the first other name that is not a token kept. An ordinary header costs a
/// scan of its name and no allocation.
///
/// Thread: called synchronously, on the caller's thread, from inside `MHD_get_connection_values_n`
/// in ``collectFramingHeaders(of:)``.
func mhdCollectFramingHeader(
    _ cls: UnsafeMutableRawPointer?,
    _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?,
    _ keySize: Int,
    _ value: UnsafePointer<CChar>?,
    _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    let head = cls.assumingMemoryBound(to: FramingHeaders.self)
    let bytes = UnsafeRawBufferPointer(start: key, count: keySize)
    if keySize == 4, nameHasPrefix(bytes, "host") {
        head.pointee.hostCount += 1
        return MHD_Result.YES
    }
    if keySize >= 14, nameHasPrefix(bytes, "content-length") || nameHasPrefix(bytes, "transfer-encoding") {
        head.pointee.fields.append(
            (
                name: String(decoding: bytes.lazy.map(asciiLowercased), as: UTF8.self),
                value: value.map {
                    String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self)
                } ?? ""
            ))
        return MHD_Result.YES
    }
    // Not a token (RFC 9110 §5.6.2): whitespace before the colon (RFC 9112 §5.1), a folded line
    // that looked like a header glued onto this name (§5.2), a control or non-ASCII byte; a reader
    // that unfolds, trims or drops such bytes sees other headers than libmicrohttpd does.
    if head.pointee.malformedName == nil, !bytes.allSatisfy(isTokenByte) {
        head.pointee.malformedName = String(decoding: bytes.prefix(64), as: UTF8.self)
    }
    return MHD_Result.YES
}

/// Whether `byte` is a `tchar` of RFC 9110 §5.6.2 (`!#$%&'*+-.^_`|~`, digits, letters): one bit
/// of a 128-bit table, no branch on the byte's class.
@inline(__always)
func isTokenByte(_ byte: UInt8) -> Bool {
    let low: UInt64 = 0x03FF_6CFA_0000_0000  // bytes 0...63
    let high: UInt64 = 0x57FF_FFFF_C7FF_FFFE  // bytes 64...127
    let table = byte < 64 ? low : high
    return byte < 128 && (table >> UInt64(byte & 63)) & 1 == 1
}

/// Whether `name` starts with `prefix` (lowercase ASCII), compared case-insensitively.
@inline(__always)
private func nameHasPrefix(_ name: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
    prefix.withUTF8Buffer { prefix in
        prefix.count <= name.count && prefix.indices.allSatisfy { asciiLowercased(name[$0]) == prefix[$0] }
    }
}

/// The request headers that decide how the body is framed (see ``mhdCollectFramingHeader``).
func collectFramingHeaders(of connection: OpaquePointer) -> FramingHeaders {
    var head = FramingHeaders()  // nothing allocated unless a framing header or a bad name is there
    withUnsafeMutablePointer(to: &head) { pointer in
        _ = MHD_get_connection_values_n(
            connection, .HEADER_KIND, mhdCollectFramingHeader, UnsafeMutableRawPointer(pointer))
    }
    return head
}
