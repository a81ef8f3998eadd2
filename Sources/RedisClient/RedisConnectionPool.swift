import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One ``RedisConnection`` per calling thread, so each libmicrohttpd worker thread has its own
/// and no lock is held during a round trip.
///
/// Invariant: a thread always gets the same connection from one pool; two live threads never
/// share one. Connections are kept in a table by thread id (`pthread_self()`), so a thread that
/// exits leaves its connection to the next thread given the same id (glibc reuses the ids of
/// exited threads), and every connection is disconnected and released when the pool goes away.
/// Connections open at most: the most threads that were ever alive at once. Thread-safe
/// (`Sendable`); the connections are not, and a connection is only used by the one live thread
/// with its id. Cost: `withConnection` is one short lock and a dictionary lookup (tens of
/// nanoseconds, against a round trip of tens of microseconds); a thread's first call creates
/// its connection (which connects lazily).
///
/// Not a pthread key: a key's value of a thread still running when the pool goes away cannot be
/// released by the pool (the process leaks it), and glibc has 1024 keys for the whole process.
package final class RedisConnectionPool: Sendable {
    package let endpoint: RedisEndpoint
    package let options: RedisOptions
    private let onConnect: (@Sendable (RedisConnection) throws(RedisError) -> Void)?
    private let byThread = Mutex<[UInt: PoolSlot]>([:])

    package init(
        endpoint: RedisEndpoint, options: RedisOptions,
        onConnect: (@Sendable (RedisConnection) throws(RedisError) -> Void)? = nil
    ) {
        self.endpoint = endpoint
        self.options = options
        self.onConnect = onConnect
    }

    deinit {
        for slot in byThread.withLock({ Array($0.values) }) { slot.connection.disconnect() }
    }

    /// Runs `body` with the calling thread's connection (created on the thread's first call).
    package func withConnection<R>(_ body: (RedisConnection) throws(RedisError) -> R) throws(RedisError) -> R {
        let thread = UInt(pthread_self())
        let slot = byThread.withLock { slots in
            if let slot = slots[thread] { return slot }
            let slot = PoolSlot(connection: RedisConnection(endpoint: endpoint, options: options, onConnect: onConnect))
            slots[thread] = slot
            return slot
        }
        return try body(slot.connection)
    }

    /// How many thread ids hold a connection of this pool now.
    package var threadCount: Int { byThread.withLock { $0.count } }
}

/// A thread's connection.
///
/// `@unchecked Sendable`: `connection` is used only by the live thread whose id holds it, and by
/// the pool's deinit, when nobody can be inside `withConnection`.
private final class PoolSlot: @unchecked Sendable {
    let connection: RedisConnection
    init(connection: RedisConnection) {
        self.connection = connection
    }
}
