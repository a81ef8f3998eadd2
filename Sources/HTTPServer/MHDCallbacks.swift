// The C callbacks handed to libmicrohttpd, and the code that turns an HTTPResponse into a
// queued MHD_Response. Every callback is a file-scope function (no captures) that recovers its
// context from the `cls` pointer. Nothing read from C memory outlives the call that lent it:
// url, method, header/argument strings and upload bytes are copied into Swift values at once.

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
/// `connection`. All calls for one connection come from that one thread, one at a time, so the
/// `RequestState` behind `*conCls` is never touched concurrently; the shared `ServerContext`
/// behind `cls` is `Sendable`, and calls for different connections run concurrently on other
/// workers.
///
/// Protocol (the `*con_cls` marker idiom):
/// 1. First call (`*conCls == nil`, headers complete): copy method, path, query and headers,
///    store a retained `RequestState` in `*conCls`, check framing, return `MHD_YES`. A framing
///    rejection is queued right here: 0.9.75 then answers with `Connection: close` and does not
///    read the body, which is what a rejection wants. A normal response is never queued on the
///    first call, because 0.9.75 would also close the connection after it (keep-alive lost).
/// 2. Calls with `*uploadDataSize > 0`: copy the bytes into the body (or discard them after a
///    streamed `payloadTooLarge`), set `*uploadDataSize = 0`.
/// 3. Final call (`*uploadDataSize == 0`): run the handler (or the rejection) and queue its response.
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
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

    guard let stored = conCls.pointee else {
        // First call: headers are complete, no body byte has been handed over yet.
        let headers = collectValues(of: connection, kind: .HEADER_KIND).map {
            (name: $0.name.lowercased(), value: $0.value ?? "")
        }
        let request = HTTPRequest(
            method: method.map { String(cString: $0) } ?? "",
            path: url.map { String(cString: $0) } ?? "",
            query: collectValues(of: connection, kind: .GET_ARGUMENT_KIND),
            headers: headers
        )
        let state = RequestState(request: request)
        conCls.pointee = Unmanaged.passRetained(state).toOpaque()
        context.requestBegan()

        switch Framing.check(headers: headers, maxBodyBytes: context.maxBodyBytes) {
        case .accept(let declaredLength):
            if let declaredLength, declaredLength > 0 {
                state.request.body.reserveCapacity(declaredLength)
            }
            return MHD_Result.YES
        case .reject(let rejection):
            state.phase = .answered
            return send(context.rejection(rejection), on: connection, closeConnection: true)
        case .unsupportedTransferEncoding:
            state.phase = .answered
            return send(context.rejection(.unsupportedTransferEncoding), on: connection, closeConnection: true)
        }
    }

    let state = Unmanaged<RequestState>.fromOpaque(stored).takeUnretainedValue()
    let size = uploadDataSize.pointee
    if size > 0 {
        uploadDataSize.pointee = 0  // everything handed over is consumed (kept or discarded)
        switch state.phase {
        case .receiving:
            guard let uploadData else { return MHD_Result.NO }
            if size > context.maxBodyBytes - state.request.body.count {
                state.phase = .rejected(.payloadTooLarge(limit: context.maxBodyBytes))
                state.request.body = []
                state.discardedBytes = size
            } else {
                state.request.body.append(
                    contentsOf: UnsafeRawBufferPointer(start: uploadData, count: size))
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
    switch state.phase {
    case .receiving:
        state.phase = .answered
        let response = context.handler(state.request)
        return send(response, on: connection, closeConnection: context.isDraining)
    case .rejected(let rejection):
        state.phase = .answered
        return send(context.rejection(rejection), on: connection, closeConnection: true)
    case .answered:
        return MHD_Result.YES
    }
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
    Unmanaged<RequestState>.fromOpaque(stored).release()
    Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().requestEnded()
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

/// `MHD_KeyValueIteratorN` for `MHD_get_connection_values_n`.
///
/// Thread: called synchronously, on the caller's thread, from inside `MHD_get_connection_values_n`
/// in `collectValues`, whose `cls` points at a local array that lives for that whole call.
func menuCollectValue(
    _ cls: UnsafeMutableRawPointer?,
    _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?,
    _ keySize: Int,
    _ value: UnsafePointer<CChar>?,
    _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    let pairs = cls.assumingMemoryBound(to: [(name: String, value: String?)].self)
    let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
    let text = value.map {
        String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self)
    }
    pairs.pointee.append((name: name, value: text))
    return MHD_Result.YES
}

/// Copies every value of `kind` (headers or query arguments) in wire order, via
/// `MHD_get_connection_values_n` (length-aware, so a `%00` in a query value survives).
private func collectValues(of connection: OpaquePointer, kind: MHD_ValueKind)
    -> [(name: String, value: String?)]
{
    var pairs: [(name: String, value: String?)] = []
    withUnsafeMutablePointer(to: &pairs) { pointer in
        _ = MHD_get_connection_values_n(connection, kind, menuCollectValue, UnsafeMutableRawPointer(pointer))
    }
    return pairs
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

/// Builds an `MHD_Response` (`MHD_create_response_from_buffer` with `MHD_RESPMEM_MUST_COPY`, so
/// libmicrohttpd owns a copy of the body), adds the headers (`MHD_add_response_header`), queues it
/// (`MHD_queue_response`) and drops our reference (`MHD_destroy_response`, in `defer`).
private func queue(_ response: HTTPResponse, on connection: OpaquePointer, closeConnection: Bool)
    -> QueueOutcome
{
    guard (200...999).contains(response.status) else {
        return .invalid("status \(response.status) is not a final HTTP status (200...999)")
    }
    // libmicrohttpd itself never sends a body for 204, 304 or HEAD; for 304 and HEAD it still
    // announces the body's Content-Length, as HTTP wants. A 204 gets neither, so pass no bytes.
    let hasBody = response.status != 204
    let created: OpaquePointer? =
        hasBody
        ? response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        : MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
    guard let mhdResponse = created else { return .refused }
    defer { MHD_destroy_response(mhdResponse) }

    for header in response.headers {
        // libmicrohttpd writes Content-Length itself and cannot send an empty header value.
        if asciiCaseInsensitiveEquals(header.name, "content-length") || header.value.isEmpty {
            continue
        }
        let nameHasNUL = header.name.utf8.contains(0)
        if nameHasNUL || header.value.utf8.contains(0)
            || MHD_add_response_header(mhdResponse, header.name, header.value) != MHD_Result.YES
        {
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
