// The C callbacks handed to libmicrohttpd by `HTTPServer.init` and `queue(_:on:closeConnection:)`
// (the connection-notify callback lives with ``RequestDeadlines``, the framing-header iterator
// with ``Framing``). Each is a file-scope function (no captures, so it converts to a C function
// pointer) that recovers its context from the `cls` pointer, checks the pointers it is given and
// forwards to the Swift code that does the work.
//
// Invariant: nothing read from C memory outlives the call that lent it (url, method, header and
// argument strings and upload bytes are copied into Swift values at once). The ``ServerContext``
// behind `cls` is only borrowed (``HTTPServer`` owns its retain); the only retains released here
// are the per-request ones handed to libmicrohttpd on purpose (a ``RequestState``'s, a
// ``ResponseBody``'s), each exactly once.

import CMicroHTTPD
import HTTPCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// libmicrohttpd's access handler (`MHD_AccessHandlerCallback`), called several times per
/// request: checks its pointers and runs ``handleAccessCall(_:_:url:method:version:uploadData:uploadDataSize:conCls:)``
/// (the state machine, and the thread rules) with the ``ServerContext`` behind `cls`.
func mhdAccessHandler(
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
        handleAccessCall(
            context, connection, url: url, method: method, version: version,
            uploadData: uploadData, uploadDataSize: uploadDataSize, conCls: conCls)
    }
}

/// libmicrohttpd's `MHD_OPTION_URI_LOG_CALLBACK` (``httpserver_mhd_uri_logger``): sees the raw request
/// target (before percent-decoding) once the request line is parsed, and returns the request's
/// first `*conCls`: nil, or ``RequestMarker/badTarget`` when a byte of it is whitespace or a
/// control byte (with `MHD_OPTION_STRICT_FOR_CLIENT` 0, `GET /rows x HTTP/1.1` arrives as the
/// target `/rows x`), which the first access-handler call answers with
/// ``HTTPRejection/invalidRequestTarget``. Cost: one pass over the target's bytes.
///
/// Thread: the libmicrohttpd thread that owns `connection`, before any other callback of the request.
func mhdCheckRequestTarget(
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
func mhdRequestCompleted(
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
func mhdLogMessage(
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
func mhdReleaseResponseBody(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    Unmanaged<ResponseBody>.fromOpaque(cls).release()
}

/// `MHD_KeyValueIteratorN` copying each field into the ``HTTPFields/Writer`` that `cls` points at:
/// header names lowercased, a header without a value given an empty one, a query argument
/// without `=` none. A field that does not fit is refused and counted, and the iteration goes on
/// (see ``HTTPFields/filled(expectingFields:bytes:_:)``).
///
/// Thread: called synchronously, on the caller's thread, from inside `MHD_get_connection_values_n`.
func mhdCopyField(
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
