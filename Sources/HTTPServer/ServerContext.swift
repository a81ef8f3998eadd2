import Synchronization

/// The long-lived state every libmicrohttpd callback of one daemon needs: the handler closures,
/// the body limit, the request-deadline sweeper, the count of requests in flight and the drain flag.
///
/// Invariant: one instance per daemon, retained with `Unmanaged.passRetained` before
/// `MHD_start_daemon` (its pointer is the `cls` of every callback) and released only after
/// `MHD_stop_daemon` has returned, so no callback can see it freed. It is genuinely `Sendable`
/// (immutable `let`s, atomics and a `Mutex`), because the callbacks run on several libmicrohttpd threads at once.
final class ServerContext: Sendable {
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let rejection: @Sendable (HTTPRejection) -> HTTPResponse
    let maxBodyBytes: Int
    /// Enforces the header and body deadlines; nil when none is configured (then no connection has a watch).
    let requestDeadlines: RequestDeadlineSweeper?

    /// Touched on every request: a counter per thread, each on its own cache lines, so the
    /// threads serving requests do not bounce one line between their cores.
    private let inFlightCount = ThreadShardedCounter()
    private let draining = Atomic<Bool>(false)

    private struct State {
        var capturingLog = true
        var startupLog: [String] = []
    }

    private let state = Mutex(State())

    init(
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        rejection: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        maxBodyBytes: Int,
        requestDeadlines: RequestDeadlineSweeper?
    ) {
        self.handler = handler
        self.rejection = rejection
        self.maxBodyBytes = maxBodyBytes
        self.requestDeadlines = requestDeadlines
    }

    /// A request got its per-request state (first access-handler call).
    func requestBegan() {
        inFlightCount.add(1)
    }

    /// libmicrohttpd reported the request completed, aborted or timed out.
    func requestEnded() {
        inFlightCount.add(-1)
    }

    /// Requests that have begun and not yet been reported completed.
    var inFlight: Int {
        inFlightCount.sum
    }

    /// From now on every response carries `Connection: close`, so keep-alive clients let go.
    func beginDraining() {
        draining.store(true, ordering: .releasing)
    }

    var isDraining: Bool {
        draining.load(ordering: .acquiring)
    }

    /// Whether libmicrohttpd's messages are still wanted (only while the daemon starts).
    var isCapturingLog: Bool {
        state.withLock { $0.capturingLog }
    }

    /// Keeps one libmicrohttpd start-up message (a few at most).
    func record(logMessage: String) {
        state.withLock {
            if $0.capturingLog, $0.startupLog.count < 16 { $0.startupLog.append(logMessage) }
        }
    }

    /// Stops capturing and returns what libmicrohttpd said while starting.
    func finishStartupLog() -> [String] {
        state.withLock { state in
            state.capturingLog = false
            let messages = state.startupLog
            state.startupLog = []
            return messages
        }
    }
}

/// Per-request state behind libmicrohttpd's `*con_cls`, for requests that carry a body.
///
/// Invariant: created on the first access-handler call of a request that announces a body
/// (`Content-Length` > 0 or chunked), retained into `*con_cls` with `Unmanaged.passRetained`,
/// released exactly once by the request-completed callback. Requests without a body need no
/// object: `*con_cls` then holds a ``RequestMarker``. Only the libmicrohttpd thread that owns the
/// connection touches it, one call at a time, so it needs no lock and is deliberately not `Sendable`.
final class RequestState {
    enum Phase {
        /// Collecting the body; the handler runs on the final call.
        case receiving
        /// The body went over the limit: drop the rest, answer with the rejection on the final call.
        case rejected(HTTPRejection)
        /// A response has been queued.
        case answered
    }

    /// The body received so far (de-chunked).
    var body: [UInt8] = []
    var phase: Phase = .receiving
    /// Bytes thrown away after a streamed rejection.
    var discardedBytes = 0
}

/// What the request headers say about the body, decided before the handler may run.
enum Framing: Equatable {
    /// Fine; `declaredLength` is the `Content-Length`, `nil` for chunked or no body.
    case accept(declaredLength: Int?)
    /// Answer with the rejection callback's response.
    case reject(HTTPRejection)
    /// A `Transfer-Encoding` other than one `chunked`: libmicrohttpd 0.9.75 cannot frame it.
    case unsupportedTransferEncoding

    /// Checks `Content-Length` / `Transfer-Encoding` (header names already lowercased).
    static func check(headers: [(name: String, value: String)], maxBodyBytes: Int) -> Framing {
        var lengths: [String] = []
        var encodings: [String] = []
        for header in headers {
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
            guard encodings.count == 1,
                asciiCaseInsensitiveEquals(String(trimmedOWS(encodings[0])), "chunked")
            else { return .unsupportedTransferEncoding }
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
        return text[start...end]
    }
}
