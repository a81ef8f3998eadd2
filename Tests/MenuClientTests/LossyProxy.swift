// A one-way-lossy HTTP proxy for the client's tests: requests reach the real server, but the
// answers to the first few requests whose line starts with a given prefix are dropped (the
// client's connection is closed instead), as when a phone loses its network after sending.

import HTTPTestSupport
import Synchronization

/// ``HTTPTestProxy`` in front of the server on `upstreamPort` that drops the answers to the first
/// `times` requests whose line starts with `prefix`. Stop with ``stop()``.
final class LossyProxy: Sendable {
    /// The answers still to drop, and the request lines whose answers were.
    private final class Dropping: Sendable {
        let remaining: Mutex<Int>
        let dropped = Mutex<[String]>([])
        init(_ times: Int) { remaining = Mutex(times) }
    }

    private let proxy: HTTPTestProxy
    private let dropping: Dropping
    var port: Int { proxy.port }
    /// Every request line received, in order.
    var requests: [String] { proxy.requests }
    /// The request lines whose answers were dropped.
    var droppedRequests: [String] { dropping.dropped.withLock { $0 } }

    init(upstreamPort: Int, dropAnswersTo prefix: String, times: Int) throws {
        let dropping = Dropping(times)
        self.dropping = dropping
        proxy = try HTTPTestProxy(upstreamPort: upstreamPort) { line in
            let drop = dropping.remaining.withLock { remaining in
                guard remaining > 0, line.hasPrefix(prefix) else { return false }
                remaining -= 1
                return true
            }
            guard drop else { return .forward }
            dropping.dropped.withLock { $0.append(line) }
            return .forwardAndDropAnswer
        }
    }

    func stop() { proxy.stop() }
}
