// The access handler's state machine: what each call of libmicrohttpd's access handler for one
// request does, driven by what `*con_cls` holds (nil, a ``RequestMarker`` or a retained
// ``RequestState``).
//
// Invariant: every request gets exactly one queued response (the handler's or a rejection's),
// never on the first call unless the connection is to be closed (libmicrohttpd 0.9.75 would
// otherwise drop keep-alive), and the handler runs at most once, on the final call, with the
// whole body. A body byte is either kept (within `maxBodyBytes`) or counted and thrown away.

import CMicroHTTPD
import HTTPCore

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

/// One call of libmicrohttpd's access handler (`MHD_AccessHandlerCallback`, entered through
/// ``mhdAccessHandler`` with its pointers checked), which is called several times per request.
///
/// Thread: called by libmicrohttpd on the polling thread (or thread-pool worker) that owns
/// `connection`. All calls for one connection come from that one thread, one at a time, so a
/// `RequestState` behind `*conCls` is never touched concurrently; the shared `ServerContext`
/// behind `cls` is `Sendable`, and calls for different connections run concurrently on other
/// workers.
///
/// Protocol (the `*con_cls` marker idiom):
/// 0. Before it, ``mhdCheckRequestTarget`` leaves `*conCls` nil, or sets ``RequestMarker/badTarget``
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
///    queue its response. A ``DeferredResponse`` instead suspends the connection (phase
///    `.waiting`, a `RequestState` made for it when the request had none) until it is ready.
/// 4. The call after a resume: the `.waiting` phase's response is made and queued.
///
/// Once the server is stopping (``ServerContext/isRefusingRequests``) a request is answered
/// ``HTTPRejection/serverStopping`` on its final call without running the handler, and a deferred
/// response is answered at once rather than suspending its connection.
func handleAccessCall(
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
        if conCls.pointee == RequestMarker.badTarget {  // set by mhdCheckRequestTarget
            conCls.pointee = RequestMarker.answered
            return send(context.rejection(.invalidRequestTarget), on: connection, closeConnection: true, context)
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
            return send(context.rejection(rejection), on: connection, closeConnection: true, context)
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
        if context.isRefusingRequests {
            return send(context.rejection(.serverStopping), on: connection, closeConnection: true, context)
        }
        switch context.handler(makeRequest(connection, method: method, url: url, body: [])) {
        case .response(let response):
            return send(
                response, on: connection, closeConnection: context.isDraining, context,
                framing: StreamFraming(method: method, version: version))
        case .deferred(let deferred):
            let state = RequestState()
            conCls.pointee = Unmanaged.passRetained(state).toOpaque()
            return suspend(connection, state, until: deferred, context)
        }
    }

    let state = Unmanaged<RequestState>.fromOpaque(stored).takeUnretainedValue()
    if case .waiting(let deferred) = state.phase {  // resumed: the deferred response is ready
        state.phase = .answered
        return send(
            deferred.response(), on: connection, closeConnection: context.isDraining, context,
            framing: StreamFraming(method: method, version: version))
    }
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
        case .answered, .waiting:
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
        if context.isRefusingRequests {
            return send(context.rejection(.serverStopping), on: connection, closeConnection: true, context)
        }
        switch context.handler(makeRequest(connection, method: method, url: url, body: body)) {
        case .response(let response):
            return send(
                response, on: connection, closeConnection: context.isDraining, context,
                framing: StreamFraming(method: method, version: version))
        case .deferred(let deferred):
            return suspend(connection, state, until: deferred, context)
        }
    case .rejected(let rejection):
        state.phase = .answered
        return send(context.rejection(rejection), on: connection, closeConnection: true, context)
    case .answered, .waiting:
        return MHD_Result.YES
    }
}

/// Suspends `connection` (this is its libmicrohttpd thread, inside the access handler) until
/// `deferred` is ready; libmicrohttpd then calls the access handler again, which finds the
/// `.waiting` phase and sends the response. The thread serves other connections meanwhile.
/// Once the server is stopping no connection is suspended: the response goes out now, the
/// deferred one if it is ready, else ``ServerContext/stoppingResponse``.
private func suspend(
    _ connection: OpaquePointer, _ state: RequestState, until deferred: DeferredResponse,
    _ context: ServerContext
) -> MHD_Result {
    state.phase = .waiting(deferred)
    if context.suspend(connection, until: deferred) { return MHD_Result.YES }
    state.phase = .answered
    deferred.abandon(with: context.stoppingResponse)  // does nothing when it is ready
    return send(deferred.response(), on: connection, closeConnection: true, context)
}

/// What `*con_cls` holds besides a retained ``RequestState``: three values that are never object
/// addresses, for requests that need no per-request object.
enum RequestMarker {
    /// Accepted, no body expected (no `Content-Length`, or 0, and no `Transfer-Encoding`).
    static var bodyless: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }
    /// A response has been queued.
    static var answered: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 2)! }
    /// Set by ``mhdCheckRequestTarget`` before the first access-handler call: the raw target has
    /// whitespace or a control byte in it.
    static var badTarget: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 3)! }
}
