// Streamed responses: a ``StreamedBody`` sent through libmicrohttpd's content-reader callback
// (`MHD_create_response_from_callback` with `MHD_SIZE_UNKNOWN`, so chunked), its connection
// suspended whenever nothing is pending and resumed by the next write.
//
// libmicrohttpd 0.9.75 (connection.c, `try_ready_chunked_body`): a reader that returns 0 puts the
// connection in `CHUNKED_BODY_UNREADY`, which the poll loop handles by calling the reader again at
// once, round after round (a busy loop). So the reader never returns 0 without first suspending
// the connection (`MHD_suspend_connection`, allowed inside a content reader); the write that
// follows resumes it (`MHD_resume_connection`, allowed from any thread), and the next round reads.
// A suspended connection neither times out nor notices its client leaving: the producer's
// periodic writes (a heartbeat) find a gone client.
//
// Invariant: each streamed response holds one retain of its ``StreamReader``, released once by
// ``mhdReleaseStream`` when libmicrohttpd destroys the response; the ``ServerContext`` knows the
// body from admission to that release, and knows it parked from the suspension until the resume
// has been asked for (``ServerContext/closeWaits()`` finishes every body and waits for those).

import CMicroHTTPD
import HTTPCore

/// What the content reader of one streamed response needs.
final class StreamReader {
    let body: StreamedBody
    let connection: SuspendedConnection
    let context: ServerContext

    init(body: StreamedBody, connection: OpaquePointer, context: ServerContext) {
        self.body = body
        self.connection = SuspendedConnection(pointer: connection)
        self.context = context
        let (handle, key) = (self.connection, ObjectIdentifier(body))
        body.setWake { [context] in
            context.resume(handle) { context.streamResumed(key) }
        }
    }

    /// Suspends the connection; called by the body under its lock, inside the content reader.
    func park() {
        context.streamParked(ObjectIdentifier(body))
        MHD_suspend_connection(connection.pointer)
    }
}

/// `MHD_create_response_from_callback`'s block size. libmicrohttpd 0.9.75 allocates (calloc) a
/// buffer of this size with every such response, but a chunked body is read straight into the
/// connection's write buffer and never uses it: kept small, since every open stream holds one
/// (16 KiB cost 9 KB of resident memory a stream).
let streamBlockSize = 256

/// Makes the `MHD_Response` that sends `body` as it is written; nil when libmicrohttpd cannot.
func makeStreamedResponse(_ body: StreamedBody, on connection: OpaquePointer, context: ServerContext)
    -> OpaquePointer?
{
    let retained = Unmanaged.passRetained(StreamReader(body: body, connection: connection, context: context))
    let response = MHD_create_response_from_callback(
        httpserver_mhd_size_unknown(), streamBlockSize, mhdReadStream, retained.toOpaque(), mhdReleaseStream)
    if response == nil {
        retained.release()
        body.connectionEnded()
        context.streamEnded(ObjectIdentifier(body))
    }
    return response
}

/// libmicrohttpd's `MHD_ContentReaderCallback` for a streamed response: what is pending, the end,
/// or (nothing pending) the connection suspended and 0.
///
/// Thread: the libmicrohttpd thread that owns the connection, inside its handling of it.
func mhdReadStream(
    _ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ max: Int
) -> Int {
    guard let cls, let buffer, max > 0 else { return httpserver_mhd_reader_end_with_error() }
    let reader = Unmanaged<StreamReader>.fromOpaque(cls).takeUnretainedValue()
    switch reader.body.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max), park: reader.park) {
    case .bytes(let count): return count
    case .parked: return 0
    case .end: return httpserver_mhd_reader_end_of_stream()
    case .abort: return httpserver_mhd_reader_end_with_error()
    }
}

/// libmicrohttpd's `MHD_ContentReaderFreeCallback` for a streamed response: the response is
/// destroyed (sent, dropped, or the daemon stopped), so the body's connection has ended.
func mhdReleaseStream(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    let reader = Unmanaged<StreamReader>.fromOpaque(cls).takeRetainedValue()
    reader.body.connectionEnded()
    reader.context.streamEnded(ObjectIdentifier(reader.body))
}
