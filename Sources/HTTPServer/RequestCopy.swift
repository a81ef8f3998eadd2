// Copying a request out of libmicrohttpd: method, path, query arguments, headers and peer address
// into an ``HTTPRequest``, on the access handler's final call.
//
// Invariant: nothing in the ``HTTPRequest`` points into libmicrohttpd's memory (its strings are
// only lent for the call): path, query arguments and headers are copied into one ``HTTPFields``
// block, the body is already a Swift array, the peer address is copied by value.

import CMicroHTTPD
import HTTPCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Copies the request into an ``HTTPRequest`` (on the final access-handler call, while
/// libmicrohttpd still holds the request's strings).
func makeRequest(
    _ connection: OpaquePointer, method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?, body: [UInt8]
) -> HTTPRequest {
    // The path, query arguments, then headers, into one allocation shared by all three: in one
    // pass over libmicrohttpd's lists when they fit a typical request's size, else measured by
    // that pass and copied by a second into a block of exactly their size. No String is made.
    let pathLength = url.map { strlen($0) } ?? 0
    var argumentCount = 0
    let fields = HTTPFields.filled(expectingFields: typicalRequestFields, bytes: typicalRequestBytes) { writer in
        _ = writer.append(
            name: UnsafeRawBufferPointer(start: nil, count: 0),
            value: UnsafeRawBufferPointer(start: url, count: pathLength))
        withUnsafeMutablePointer(to: &writer) { writer in
            _ = MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, mhdCopyField, writer)
            argumentCount = writer.pointee.neededFields - 1
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, mhdCopyField, writer)
        }
    }
    let (pathField, fieldsAfterPath) = fields.split(at: 1)
    let (query, headers) = fieldsAfterPath.split(at: argumentCount)
    return HTTPRequest(
        method: method.map(methodName) ?? "",
        pathField: pathField,
        query: query,
        lowercasedHeaders: headers,
        body: body,
        peerAddress: peerAddress(of: connection))
}

/// The connection's peer address, copied out of libmicrohttpd's connection (no allocation).
func peerAddress(of connection: OpaquePointer) -> IPAddress? {
    var bytes = IPAddress.zeroBytes
    let found = withUnsafeMutableBytes(of: &bytes) {
        httpserver_mhd_client_address(connection, $0.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }
    return found == 1 ? IPAddress(bytes: bytes) : nil
}

/// What a request's fields are first copied into (path, query arguments, headers): enough for
/// `curl` and most API clients, in a block small enough for malloc's per-thread cache (16 entries
/// of 16 bytes plus 640 bytes). A larger request is measured and copied again.
let typicalRequestFields = 16
let typicalRequestBytes = 640

/// The method as a `String`: the common ones without decoding (a literal is free to make). Each
/// byte is read only after the one before it was not the terminating NUL.
private func methodName(_ method: UnsafePointer<CChar>) -> String {
    func isExactly(_ name: StaticString) -> Bool {
        name.withUTF8Buffer { name in
            for (offset, byte) in name.enumerated() where UInt8(bitPattern: method[offset]) != byte { return false }
            return method[name.count] == 0
        }
    }
    if isExactly("GET") { return "GET" }
    if isExactly("POST") { return "POST" }
    if isExactly("PUT") { return "PUT" }
    return String(cString: method)
}
