import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One `text/event-stream` request, read as its bytes arrive: the answer's head, then its events.
///
/// swift-corelibs-foundation has no `URLSession.bytes(for:)`, so the bytes come through a data
/// delegate (`urlSession(_:dataTask:didReceive:)`), on Apple platforms and Linux alike. Each stream
/// has a URLSession of its own (a delegate belongs to its session), invalidated when the stream
/// ends or is cancelled.
///
/// Invariant: ``head`` is answered once (the status and headers, or the transport error);
/// ``events`` yields the events in order and finishes once, when the body ends (normally, with
/// an error, or by ``cancel()``). Cost: one URLSession and one connection per stream.
final class MenuEventStream: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// The answer's status and headers (lowercased names); a body that is not a stream is kept
    /// in `body`, to read the server's error from.
    struct Head: Sendable {
        var status: Int
        var headers: [String: String]
        var isEventStream: Bool { status == 200 && headers["content-type"]?.hasPrefix("text/event-stream") == true }
    }

    private struct State {
        var reader: ServerSentEventReader
        var head: CheckedContinuation<Head, any Error>?
        var headAnswered = false
        var isStream = false
        var body = Data()
        var session: URLSession?
    }

    /// The events as they arrive.
    let events: AsyncThrowingStream<ServerSentEvent, any Error>
    private let eventSink: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation
    private let state: Mutex<State>
    private let request: URLRequest
    private let idleTimeout: TimeInterval

    /// A stream of `request` that fails when nothing arrives for `idleTimeout` seconds (set it
    /// above the server's heartbeat).
    init(request: URLRequest, lastEventID: String, idleTimeout: TimeInterval) {
        self.request = request
        self.idleTimeout = idleTimeout
        (events, eventSink) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
        state = Mutex(State(reader: ServerSentEventReader(lastEventID: lastEventID)))
        super.init()
    }

    /// Sends the request; returns its head once it has arrived (the events follow in ``events``).
    func start() async throws -> (head: Head, body: Data) {
        let settings = MenuHTTP.settings(timeout: idleTimeout)
        settings.timeoutIntervalForResource = .infinity
        let session = URLSession(configuration: settings, delegate: self, delegateQueue: nil)
        state.withLock { $0.session = session }
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                state.withLock { $0.head = continuation }
                session.dataTask(with: request).resume()
            }
        } onCancel: {
            PendingExchange.cancels.async { self.cancel() }  // not under the task's lock: see MenuHTTP.exchange
        }
        guard !head.isEventStream else { return (head, Data()) }
        // Not a stream: the whole (short) body, for the error it carries.
        for try await _ in events {}
        return (head, state.withLock { $0.body })
    }

    /// The reconnection delay the server last asked for, in milliseconds.
    var retryMilliseconds: Int? { state.withLock { $0.reader.retryMilliseconds } }

    /// Ends the stream (and its request) now.
    func cancel() {
        state.withLock { $0.session }?.invalidateAndCancel()
        answerHead(.failure(CancellationError()))
        eventSink.finish(throwing: CancellationError())
    }

    private func answerHead(_ result: Result<Head, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Head, any Error>? in
            guard !state.headAnswered, let continuation = state.head else { return nil }
            state.headAnswered = true
            state.head = nil
            if case .success(let head) = result { state.isStream = head.isEventStream }
            return continuation
        }
        continuation?.resume(with: result)
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        var headers: [String: String] = [:]
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if let http = response as? HTTPURLResponse {
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
        }
        answerHead(.success(Head(status: status, headers: headers)))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let events = state.withLock { state -> [ServerSentEvent] in
            guard state.isStream else {
                if state.body.count < 64 * 1024 { state.body.append(data) }
                return []
            }
            return state.reader.read(data)
        }
        for event in events { eventSink.yield(event) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { answerHead(.failure(error)) }
        if let error { eventSink.finish(throwing: error) } else { eventSink.finish() }
        session.finishTasksAndInvalidate()
    }
}
