// The C callbacks handed to libmicrohttpd, and the code that turns an HTTPResponse into a
// queued MHD_Response. Every callback is a file-scope function (no captures) that recovers its
// context from the `cls` pointer. Nothing read from C memory outlives the call that lent it:
// url, method, header/argument strings and upload bytes are copied into Swift values at once.

import HTTPCore
import CMicroHTTPD

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// After a streamed body went over the limit, at most this many further bytes are read and thrown
/// away while waiting for the end of the body; past it the connection is closed without an answer.
/// (libmicrohttpd 0.9.75 refuses MHD_queue_response while a body is still arriving.)
let maxDiscardedBodyBytes = 1 << 20

/// libmicrohttpd's access handler (`MHD_AccessHandlerCallback`), called several times per request.
///
/// Thread: called by libmicrohttpd on the polling thread (or thread-pool worker) that owns
/// `connection`. All calls for one connection come from that one thread, one at a time, so a
/// `RequestState` behind `*conCls` is never touched concurrently; the shared `ServerContext`
/// behind `cls` is `Sendable`, and calls for different connections run concurrently on other
/// workers.
///
/// Protocol (the `*con_cls` marker idiom):
/// 0. Before it, ``menuCheckRequestTarget`` leaves `*conCls` nil, or sets ``RequestMarker/badTarget``
///    for a raw target with whitespace or a control byte (refused on the first call).
/// 1. First call (`*conCls` nil or `badTarget`, headers complete): check framing from the
///    `Content-Length` / `Transfer-Encoding` / `Host` headers, the header names and the version
///    alone (see ``Framing``), store ``RequestMarker/bodyless`` in `*conCls` for a request
///    without a body or a retained `RequestState` for one with a body, return `MHD_YES`.
///    A framing rejection is queued right here (and `*conCls` set to ``RequestMarker/answered``):
///    0.9.75 then answers with `Connection: close` and does not read the body, which is what a
///    rejection wants. A normal response is never queued on the first call, because 0.9.75 would
///    also close the connection after it (keep-alive lost).
/// 2. Calls with `*uploadDataSize > 0`: copy the bytes into the body (or discard them after a
///    streamed `payloadTooLarge`), set `*uploadDataSize = 0`.
/// 3. Final call (`*uploadDataSize == 0`): copy method, path, query and headers into an
///    ``HTTPRequest`` (libmicrohttpd still holds them), run the handler (or the rejection) and
///    queue its response.
func menuAccessHandler(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let conCls else { return MHD_Result.NO }
    // Guaranteed rather than taken: no retain/release of the context every request threads share.
    return Unmanaged<ServerContext>.fromOpaque(cls)._withUnsafeGuaranteedRef { context in
        access(context, connection, url: url, method: method, version: version, uploadData: uploadData,
               uploadDataSize: uploadDataSize, conCls: conCls)
    }
}

/// The access handler's work, with its pointers checked (see ``menuAccessHandler``).
private func access(
    _ context: ServerContext,
    _ connection: OpaquePointer,
    url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?,
    version: UnsafePointer<CChar>?,
    uploadData: UnsafePointer<CChar>?,
    uploadDataSize: UnsafeMutablePointer<Int>,
    conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>
) -> MHD_Result {
    guard let stored = conCls.pointee, stored != RequestMarker.badTarget else {
        // First call: headers are complete, no body byte has been handed over yet. Only the
        // framing headers are looked at now; the request value is built on the final call.
        context.requestBegan()
        if conCls.pointee == RequestMarker.badTarget {  // set by menuCheckRequestTarget
            conCls.pointee = RequestMarker.answered
            return send(context.rejection(.invalidRequestTarget), on: connection, closeConnection: true)
        }
        let framingHeaders = collectFramingHeaders(of: connection)
        let isHTTP10 = version.map { strcmp($0, "HTTP/1.0") == 0 } ?? false
        switch Framing.check(framingHeaders, isHTTP10: isHTTP10, maxBodyBytes: context.maxBodyBytes) {
        case .accept(let declaredLength):
            let bodyless = framingHeaders.fields.isEmpty || declaredLength == 0
            context.headersCompleted(on: connection, bodyFollows: !bodyless)
            if bodyless {
                conCls.pointee = RequestMarker.bodyless  // nothing to keep: no allocation
            } else {
                let state = RequestState()
                if let declaredLength { state.body.reserveCapacity(declaredLength) }
                conCls.pointee = Unmanaged.passRetained(state).toOpaque()
            }
            return MHD_Result.YES
        case .reject(let rejection):
            context.headersCompleted(on: connection, bodyFollows: false)
            conCls.pointee = RequestMarker.answered
            return send(context.rejection(rejection), on: connection, closeConnection: true)
        }
    }

    if stored == RequestMarker.answered {
        uploadDataSize.pointee = 0
        return MHD_Result.YES
    }
    if stored == RequestMarker.bodyless {
        if uploadDataSize.pointee > 0 {  // cannot happen without Content-Length or chunked; drop it
            uploadDataSize.pointee = 0
            return MHD_Result.YES
        }
        conCls.pointee = RequestMarker.answered
        let response = context.handler(makeRequest(connection, method: method, url: url, body: []))
        return send(response, on: connection, closeConnection: context.isDraining)
    }

    let state = Unmanaged<RequestState>.fromOpaque(stored).takeUnretainedValue()
    let size = uploadDataSize.pointee
    if size > 0 {
        uploadDataSize.pointee = 0  // everything handed over is consumed (kept or discarded)
        switch state.phase {
        case .receiving:
            guard let uploadData else { return MHD_Result.NO }
            if size > context.maxBodyBytes - state.body.count {
                state.phase = .rejected(.payloadTooLarge(limit: context.maxBodyBytes))
                state.body = []
                state.discardedBytes = size
            } else {
                state.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: size))
            }
        case .rejected:
            state.discardedBytes += size
            if state.discardedBytes > maxDiscardedBodyBytes {
                return MHD_Result.NO  // close: the client keeps streaming an oversized body
            }
        case .answered:
            break
        }
        return MHD_Result.YES
    }

    // Final call: the whole request has arrived.
    context.bodyReceived(on: connection)
    switch state.phase {
    case .receiving:
        state.phase = .answered
        let body = state.body
        state.body = []
        let response = context.handler(makeRequest(connection, method: method, url: url, body: body))
        return send(response, on: connection, closeConnection: context.isDraining)
    case .rejected(let rejection):
        state.phase = .answered
        return send(context.rejection(rejection), on: connection, closeConnection: true)
    case .answered:
        return MHD_Result.YES
    }
}

/// Copies the request into an ``HTTPRequest`` (on the final access-handler call, while
/// libmicrohttpd still holds the request's strings).
private func makeRequest(
    _ connection: OpaquePointer, method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?, body: [UInt8]
) -> HTTPRequest {
    // The path, query arguments, then headers, into one allocation shared by all three: in one
    // pass over libmicrohttpd's lists when they fit a typical request's size, else measured by
    // that pass and copied by a second into a block of exactly their size. No String is made.
    let pathLength = url.map { strlen($0) } ?? 0
    var argumentCount = 0
    let fields = HTTPFields.filled(expectingFields: typicalRequestFields, bytes: typicalRequestBytes) { writer in
        _ = writer.append(name: UnsafeRawBufferPointer(start: nil, count: 0),
                          value: UnsafeRawBufferPointer(start: url, count: pathLength))
        withUnsafeMutablePointer(to: &writer) { writer in
            _ = MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, menuCopyField, writer)
            argumentCount = writer.pointee.neededFields - 1
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, menuCopyField, writer)
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
private func peerAddress(of connection: OpaquePointer) -> IPAddress? {
    var bytes = IPAddress.zeroBytes
    let found = withUnsafeMutableBytes(of: &bytes) { menu_mhd_client_address(connection, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
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

/// What `*con_cls` holds besides a retained ``RequestState``: two values that are never object
/// addresses, for requests that need no per-request object.
enum RequestMarker {
    /// Accepted, no body expected (no `Content-Length`, or 0, and no `Transfer-Encoding`).
    static var bodyless: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }
    /// A response has been queued.
    static var answered: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 2)! }
    /// Set by ``menuCheckRequestTarget`` before the first access-handler call: the raw target has
    /// whitespace or a control byte in it.
    static var badTarget: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 3)! }
}

/// libmicrohttpd's `MHD_OPTION_URI_LOG_CALLBACK` (``menu_mhd_uri_logger``): sees the raw request
/// target (before percent-decoding) once the request line is parsed, and returns the request's
/// first `*conCls`: nil, or ``RequestMarker/badTarget`` when a byte of it is whitespace or a
/// control byte (with `MHD_OPTION_STRICT_FOR_CLIENT` 0, `GET /rows x HTTP/1.1` arrives as the
/// target `/rows x`), which the first access-handler call answers with
/// ``HTTPRejection/invalidRequestTarget``. Cost: one pass over the target's bytes.
///
/// Thread: the libmicrohttpd thread that owns `connection`, before any other callback of the request.
func menuCheckRequestTarget(
    _ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    guard var byte = uri else { return nil }
    while byte.pointee != 0 {
        let value = UInt8(bitPattern: byte.pointee)
        if value <= 0x20 || value == 0x7F { return RequestMarker.badTarget }
        byte += 1
    }
    return nil
}

/// libmicrohttpd's `MHD_RequestCompletedCallback` (`MHD_OPTION_NOTIFY_COMPLETED`): the request
/// finished, was aborted, or timed out, or the daemon is stopping.
///
/// Thread: called by libmicrohttpd on the thread that owns `connection` (or inside
/// `MHD_stop_daemon` while it closes connections), after the last access-handler call for the
/// request, so nothing else uses the `RequestState` any more. It releases the retain taken on the
/// first access-handler call and clears `*conCls`; `ServerContext` is `Sendable`.
func menuRequestCompleted(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    guard let cls, let conCls, let stored = conCls.pointee else { return }
    conCls.pointee = nil
    // A bad target whose request ended before the access handler ran (libmicrohttpd refused its
    // headers itself): the request never began.
    if stored == RequestMarker.badTarget { return }
    if stored != RequestMarker.bodyless && stored != RequestMarker.answered {
        Unmanaged<RequestState>.fromOpaque(stored).release()
    }
    // Guaranteed rather than taken: no retain/release of the context every request threads share.
    Unmanaged<ServerContext>.fromOpaque(cls)._withUnsafeGuaranteedRef {
        $0.requestCompleted(on: connection)
        $0.requestEnded()
    }
}

/// libmicrohttpd's `MHD_LogCallback` (`MHD_OPTION_EXTERNAL_LOGGER` with `MHD_USE_ERROR_LOG`).
///
/// Thread: any libmicrohttpd thread, or the thread calling `MHD_start_daemon`. It formats the
/// message into a local buffer with `vsnprintf` (the `va_list` is only used inside this call) and
/// hands it to `ServerContext`, which keeps it behind its `Mutex` only while the daemon starts
/// (to explain a failed start) and drops it afterwards: nothing is ever printed.
func menuLogMessage(
    _ cls: UnsafeMutableRawPointer?,
    _ format: UnsafePointer<CChar>?,
    _ arguments: CVaListPointer?
) {
    guard let cls, let format, let arguments else { return }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    guard context.isCapturingLog else { return }
    var buffer = [CChar](repeating: 0, count: 512)
    let written = buffer.withUnsafeMutableBufferPointer {
        vsnprintf($0.baseAddress, $0.count, format, arguments)
    }
    guard written > 0 else { return }
    let length = min(Int(written), buffer.count - 1)
    var message = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    while let last = message.last, last.isWhitespace { message.removeLast() }
    if !message.isEmpty { context.record(logMessage: message) }
}

/// libmicrohttpd's `MHD_ContentReaderFreeCallback` for a response made from a ``ResponseBody``:
/// drops the retain `queue` passed as `cls`.
///
/// Thread: whichever libmicrohttpd thread destroys the response (after the last byte was sent or
/// the connection closed), exactly once per response.
func menuReleaseResponseBody(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<ResponseBody>.fromOpaque(cls).release()
}

/// `MHD_KeyValueIteratorN` copying each field into the ``HTTPFields/Writer`` that `cls` points at:
/// header names lowercased, a header without a value given an empty one, a query argument
/// without `=` none. A field that does not fit is refused and counted, and the iteration goes on
/// (see ``HTTPFields/filled(expectingFields:bytes:_:)``).
///
/// Thread: called synchronously, on the caller's thread, from inside `MHD_get_connection_values_n`.
func menuCopyField(
    _ cls: UnsafeMutableRawPointer?,
    _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?,
    _ keySize: Int,
    _ value: UnsafePointer<CChar>?,
    _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    let writer = cls.assumingMemoryBound(to: HTTPFields.Writer.self)
    let isHeader = kind == .HEADER_KIND
    _ = writer.pointee.append(
        name: UnsafeRawBufferPointer(start: key, count: keySize),
        value: value.map { UnsafeRawBufferPointer(start: $0, count: valueSize) }
            ?? (isHeader ? UnsafeRawBufferPointer(start: key, count: 0) : nil),
        lowercasingName: isHeader)
    return MHD_Result.YES  // on, even past a refused field: the writer counts what a retry needs
}

/// A short `text/plain` response for answers the wrapper has to write itself.
private func plainTextResponse(status: Int, _ text: String) -> HTTPResponse {
    HTTPResponse(
        status: status,
        headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")],
        body: Array((text + "\n").utf8))
}

/// Queues `response` on `connection`; a response that cannot be expressed is replaced by a
/// plain-text 500 naming the problem. Returns what the access handler must return.
private func send(_ response: HTTPResponse, on connection: OpaquePointer, closeConnection: Bool)
    -> MHD_Result
{
    switch queue(response, on: connection, closeConnection: closeConnection) {
    case .queued:
        return MHD_Result.YES
    case .refused:
        return MHD_Result.NO
    case .invalid(let problem):
        let fallback = plainTextResponse(
            status: 500, "HTTPServer could not send the handler's response: \(problem).")
        if case .queued = queue(fallback, on: connection, closeConnection: closeConnection) {
            return MHD_Result.YES
        }
        return MHD_Result.NO
    }
}

private enum QueueOutcome {
    case queued
    /// libmicrohttpd failed (out of memory, connection state): close the connection.
    case refused
    /// The response cannot be sent as given.
    case invalid(String)
}

/// Builds an `MHD_Response`, adds the headers (`MHD_add_response_header`), queues it
/// (`MHD_queue_response`) and drops our reference (`MHD_destroy_response`, in `defer`).
/// A ``ResponseBody`` is sent in place: `MHD_create_response_from_buffer_with_free_callback_cls`
/// with a retain of it as `cls`, released by ``menuReleaseResponseBody`` once libmicrohttpd is done.
/// An array body is copied (`MHD_RESPMEM_MUST_COPY`).
private func queue(_ response: HTTPResponse, on connection: OpaquePointer, closeConnection: Bool)
    -> QueueOutcome
{
    guard (200...999).contains(response.status) else {
        return .invalid("status \(response.status) is not a final HTTP status (200...999)")
    }
    // libmicrohttpd itself never sends a body for 204, 304 or HEAD; for 304 and HEAD it still
    // announces the body's Content-Length, as HTTP wants. A 204 gets neither, so pass no bytes.
    let created: OpaquePointer?
    switch response.payload {
    case _ where response.status == 204:
        created = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
    case .array(let bytes):
        created = bytes.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
    case .body(let body):
        let retained = Unmanaged.passRetained(body)
        created = MHD_create_response_from_buffer_with_free_callback_cls(
            body.count, body.start, menuReleaseResponseBody, retained.toOpaque())
        if created == nil { retained.release() }
    }
    guard let mhdResponse = created else { return .refused }
    defer { MHD_destroy_response(mhdResponse) }

    for header in response.headers {
        // libmicrohttpd writes Content-Length itself and cannot send an empty header value.
        if header.value.isEmpty
            || (header.name.utf8.count == 14 && asciiCaseInsensitiveEquals(header.name, "content-length"))
        {
            continue
        }
        // withCString: the implicit String-to-pointer conversion allocates for short strings. A NUL
        // inside either string would cut the C string short: refused, rather than half sent.
        let added = header.name.withCString { name in
            header.value.withCString { value in
                strlen(name) == header.name.utf8.count && strlen(value) == header.value.utf8.count
                    && MHD_add_response_header(mhdResponse, name, value) == MHD_Result.YES
            }
        }
        if !added {
            return .invalid(
                "header \(String(reflecting: header.name)) is not valid in HTTP/1.1 "
                    + "(empty name, space, tab, CR, LF or NUL in it, or a Transfer-Encoding other than chunked)")
        }
    }
    if closeConnection, MHD_add_response_header(mhdResponse, "Connection", "close") != MHD_Result.YES {
        return .refused
    }
    guard MHD_queue_response(connection, UInt32(response.status), mhdResponse) == MHD_Result.YES else {
        return .refused
    }
    return .queued
}
