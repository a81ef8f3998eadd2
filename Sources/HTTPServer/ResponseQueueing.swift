// Queueing a response: turning an ``HTTPResponse`` into an `MHD_Response` and queueing it on the
// connection.
//
// Invariant: each call queues at most one response and drops its own reference to the
// `MHD_Response` before returning; a ``ResponseBody`` stays retained exactly as long as
// libmicrohttpd holds it (released once by ``mhdReleaseResponseBody``); a response that cannot be
// expressed in HTTP/1.1 is never half sent but replaced by a plain-text 500 naming the problem.

import CMicroHTTPD
import HTTPCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A short `text/plain` response for answers the wrapper has to write itself.
private func plainTextResponse(status: Int, _ text: String) -> HTTPResponse {
    HTTPResponse(
        status: status,
        headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")],
        body: Array((text + "\n").utf8))
}

/// Queues `response` on `connection`; a response that cannot be expressed is replaced by a
/// plain-text 500 naming the problem. A streamed one is taken over by ``StreamSockets``
/// (``takeOver(_:_:on:_:_:)``, framed as `framing` says), or answered with
/// ``ServerContext/stoppingResponse`` once the server stops admitting streams, or with the
/// rejection of an address at its limit. Returns what the access handler must return.
func send(
    _ response: HTTPResponse, on connection: OpaquePointer, closeConnection: Bool, _ context: ServerContext,
    framing: StreamFraming = StreamFraming()
) -> MHD_Result {
    if let body = response.streamedBody {
        guard context.admitStream(body) else {
            body.connectionEnded()
            return send(context.stoppingResponse, on: connection, closeConnection: true, context)
        }
        let outcome = takeOver(response, body, on: connection, framing, context)
        if case .taken = outcome { return MHD_Result.NO }  // libmicrohttpd lets go of the connection
        context.streamEnded(ObjectIdentifier(body))
        body.connectionEnded()
        switch outcome {
        case .taken, .failed:
            return MHD_Result.NO
        case .refused(let rejection):
            return send(context.rejection(rejection), on: connection, closeConnection: true, context)
        case .invalid(let problem):
            return sendProblem(problem, on: connection, closeConnection: closeConnection, context)
        }
    }
    switch queue(response, on: connection, closeConnection: closeConnection, context) {
    case .queued:
        return MHD_Result.YES
    case .refused:
        return MHD_Result.NO
    case .invalid(let problem):
        return sendProblem(problem, on: connection, closeConnection: closeConnection, context)
    }
}

/// Queues the plain-text 500 that stands for a handler's response that cannot be sent, naming
/// `problem`.
private func sendProblem(
    _ problem: String, on connection: OpaquePointer, closeConnection: Bool, _ context: ServerContext
) -> MHD_Result {
    let fallback = plainTextResponse(status: 500, "HTTPServer could not send the handler's response: \(problem).")
    if case .queued = queue(fallback, on: connection, closeConnection: closeConnection, context) {
        return MHD_Result.YES
    }
    return MHD_Result.NO
}

/// The statuses a handler's response may have: a final status that RFC 9110 (section 15)
/// defines, 200...599. libmicrohttpd itself would send 600...999 too; an informational 1xx is
/// not a response to end a request with.
let sendableStatuses: ClosedRange<Int> = 200 ... 599

/// Why `status` cannot be sent, or nil when it can (``sendableStatuses``).
func unsendableStatus(_ status: Int) -> String? {
    sendableStatuses.contains(status)
        ? nil
        : "status \(status) is not a final HTTP status (\(sendableStatuses.lowerBound)...\(sendableStatuses.upperBound))"
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
/// with a retain of it as `cls`, released by ``mhdReleaseResponseBody`` once libmicrohttpd is done.
/// An array body is copied (`MHD_RESPMEM_MUST_COPY`).
private func queue(
    _ response: HTTPResponse, on connection: OpaquePointer, closeConnection: Bool, _ context: ServerContext
) -> QueueOutcome {
    if let problem = unsendableStatus(response.status) { return .invalid(problem) }
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
            body.count, body.start, mhdReleaseResponseBody, retained.toOpaque())
        if created == nil { retained.release() }
    case .stream:
        return .invalid("a streamed body is sent by StreamSockets, not queued")
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
