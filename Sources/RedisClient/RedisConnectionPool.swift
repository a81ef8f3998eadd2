import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One ``RedisConnection`` per calling thread, so each libmicrohttpd worker thread has its own
/// and no lock is held during a round trip.
///
/// Invariant: a thread always gets the same connection from one pool (except while the process
/// has no pthread key left: then each call gets a connection of its own); two threads never share
/// one. A connection lives in a pthread key slot of its thread and is disconnected and released
/// when that thread exits (the key's destructor) or when the pool goes away, whichever is first
/// (the registry decides who, under its lock). Thread-safe (`Sendable`); the connections are not,
/// and never leave their thread. Cost: `withConnection` is one `pthread_getspecific`; a thread's
/// first call creates its connection (which connects lazily).
///
/// When the process has no pthread key left (glibc has 1024; a test process with hundreds of
/// servers alive can use them up), the pool keeps its connections in a table by thread id behind
/// a lock instead (one short lock per call): a thread still gets its own connection, kept until
/// the pool goes away (a later thread given the id of an exited one takes over its connection).
package final class RedisConnectionPool: Sendable {
    package let endpoint: RedisEndpoint
    package let options: RedisOptions
    private let onConnect: (@Sendable (RedisConnection) throws(RedisError) -> Void)?
    private let key: pthread_key_t?
    private let byThread = Mutex<[UInt: PoolSlot]>([:])
    private let registry = PoolRegistry()

    package init(endpoint: RedisEndpoint, options: RedisOptions, onConnect: (@Sendable (RedisConnection) throws(RedisError) -> Void)? = nil) {
        self.endpoint = endpoint
        self.options = options
        self.onConnect = onConnect
        var key = pthread_key_t()
        self.key = pthread_key_create(&key, releasePoolSlot) == 0 ? key : nil
    }

    deinit {
        if let key { pthread_key_delete(key) }  // no destructor runs for this key any more
        registry.closeAll()
    }

    /// Runs `body` with the calling thread's connection (created on the thread's first call).
    package func withConnection<R>(_ body: (RedisConnection) throws(RedisError) -> R) throws(RedisError) -> R {
        guard let key else {
            let thread = UInt(pthread_self())
            let slot = byThread.withLock { slots in
                if let slot = slots[thread] { return slot }
                let slot = PoolSlot(connection: RedisConnection(endpoint: endpoint, options: options, onConnect: onConnect), registry: registry)
                registry.add(slot)
                slots[thread] = slot
                return slot
            }
            return try body(slot.connection)
        }
        if let slot = pthread_getspecific(key) {
            return try body(Unmanaged<PoolSlot>.fromOpaque(slot).takeUnretainedValue().connection)
        }
        let connection = RedisConnection(endpoint: endpoint, options: options, onConnect: onConnect)
        let slot = PoolSlot(connection: connection, registry: registry)
        registry.add(slot)
        pthread_setspecific(key, Unmanaged.passRetained(slot).toOpaque())
        return try body(connection)
    }

    /// How many threads hold a connection of this pool now.
    package var threadCount: Int { registry.count }
}

/// The thread-exit destructor of a pool's pthread key: closes the exiting thread's connection
/// (unless the pool already did) and drops the slot's retain. Called by the C library on the
/// exiting thread, once per slot that is not NULL.
private func releasePoolSlot(_ pointer: UnsafeMutableRawPointer?) {
    guard let pointer else { return }
    let slot = Unmanaged<PoolSlot>.fromOpaque(pointer).takeRetainedValue()
    slot.registry.close(slot)
}

/// A thread's connection and the registry that may close it.
///
/// `@unchecked Sendable`: `connection` is used only by its thread, except by ``PoolRegistry``'s
/// close, which runs when that thread has exited or the pool is gone (nobody can be inside
/// `withConnection` then), and only once, decided under the registry's lock.
private final class PoolSlot: @unchecked Sendable {
    let connection: RedisConnection
    let registry: PoolRegistry
    init(connection: RedisConnection, registry: PoolRegistry) {
        self.connection = connection
        self.registry = registry
    }
}

/// The slots of one pool whose connection is still open.
private final class PoolRegistry: Sendable {
    private let open = Mutex<[ObjectIdentifier: PoolSlot]>([:])

    var count: Int { open.withLock { $0.count } }

    func add(_ slot: PoolSlot) { open.withLock { $0[ObjectIdentifier(slot)] = slot } }

    /// Disconnects `slot`'s connection unless ``closeAll()`` already did.
    func close(_ slot: PoolSlot) {
        guard open.withLock({ $0.removeValue(forKey: ObjectIdentifier(slot)) }) != nil else { return }
        slot.connection.disconnect()
    }

    /// Disconnects every connection not closed yet (their slots stay with their threads, empty).
    func closeAll() {
        let slots = open.withLock { open in
            defer { open.removeAll() }
            return Array(open.values)
        }
        for slot in slots { slot.connection.disconnect() }
    }
}
