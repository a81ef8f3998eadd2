/// Why a Redis call did not get a reply. An error *reply* from Redis is not one of these: it is
/// returned as ``RedisReply/error(_:)``.
///
/// Invariant: after `connectFailed` and `connectionLost` the connection holds no context and is
/// backing off; `backingOff` means no attempt was made at all.
package enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Could not connect, or AUTH / SELECT / the owner's `onConnect` failed: what hiredis or Redis said.
    case connectFailed(String)
    /// An I/O error or timeout during a command; the context was freed.
    case connectionLost(String)
    /// A recent failure; no attempt is made until `retryAfter` has passed.
    case backingOff(retryAfter: Duration)
    /// A reply of an unexpected shape.
    case protocolViolation(String)
    /// A command or call waited in a ``RedisPipeline``'s queue for `waited` (its queue timeout)
    /// behind `ahead` other commands (other callers' work on the same connection) and was never sent.
    case queuedTooLong(waited: Duration, ahead: Int)

    package var description: String {
        switch self {
        case .connectFailed(let reason): "cannot connect to Redis: \(reason)"
        case .connectionLost(let reason): "lost the Redis connection: \(reason)"
        case .backingOff(let retryAfter): "Redis was unreachable a moment ago; the next attempt is in \(retryAfter)"
        case .protocolViolation(let reason): "unexpected reply from Redis: \(reason)"
        case .queuedTooLong(let waited, let ahead):
            "waited \(waited) queued behind \(ahead) other command\(ahead == 1 ? "" : "s") for the Redis pipeline's connection "
                + "and was not sent"
        }
    }
}

/// How long a connection waits and how it backs off.
///
/// Invariant: `timeout` bounds the connect and each read or write of a command (so a call against a
/// stalled server returns after about `timeout` per round trip); after a failure no attempt is made
/// for `initialBackoff`, doubling per further failure up to `maxBackoff`, back to none on success.
package struct RedisOptions: Sendable {
    /// The connect timeout and each command's read/write timeout.
    package var timeout: Duration = .milliseconds(500)
    package var initialBackoff: Duration = .milliseconds(50)
    package var maxBackoff: Duration = .seconds(1)
    /// A connection unused for this long is checked before its next command (one `poll`, no
    /// round trip), and replaced at once if Redis has closed it meanwhile (its idle `timeout`,
    /// `CLIENT KILL`), so that the command is not lost on it.
    package var idleCheckAfter: Duration = .seconds(1)

    package init(
        timeout: Duration = .milliseconds(500), initialBackoff: Duration = .milliseconds(50),
        maxBackoff: Duration = .seconds(1),
        idleCheckAfter: Duration = .seconds(1)
    ) {
        self.timeout = timeout
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.idleCheckAfter = idleCheckAfter
    }

    /// `timeout` in whole milliseconds, at least 1 (hiredis takes a `timeval`; 0 would mean no timeout).
    var timeoutMilliseconds: Int {
        let (seconds, attoseconds) = timeout.components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}

/// A Lua script run with EVALSHA; its SHA1 comes from SCRIPT LOAD and is cached per connection.
///
/// Invariant: `source` is what SCRIPT LOAD is sent; `fingerprint` is the FNV-1a hash of its UTF-8
/// and is all that `hash(into:)` feeds the hasher. Cost: the source string and one word; each
/// connection keeps one SHA1 per distinct source it ran, and finding it hashes one word (hashing
/// the 2-3 KB write script per EVALSHA cost 11,000 instructions a toggle, 6% of the server's).
package struct RedisScript: Sendable, Hashable {
    package let source: String
    private let fingerprint: UInt64

    package init(_ source: String) {
        self.source = source
        fingerprint = source.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    package static func == (left: RedisScript, right: RedisScript) -> Bool {
        left.fingerprint == right.fingerprint && left.source == right.source
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }
}
