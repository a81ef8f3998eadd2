import Dispatch
import Foundation
import MenuAvailability
import MenuService
import RedisClient
import Synchronization

/// The availability overlay shared by every instance on one Redis and key prefix
/// (`<prefix>availability`, a hash: `r` the revision, `j` the overlay as ``AvailabilityFile``
/// writes it).
///
/// - Keeping is a compare-and-set script: it writes only when Redis still has the revision the
///   instance applied its batch to, and otherwise answers the overlay kept first, which the
///   service serves and applies the batch to again (``AvailabilityNotKept/current``).
/// - Other instances hear of a write at once through client-side caching in broadcast mode
///   (`CLIENT TRACKING on REDIRECT <listener> BCAST PREFIX <key>`): Redis sends the key's
///   invalidation to this instance's listener, which reads the overlay again. A lost
///   subscription reads it again too (news may have been missed), and a read every second
///   catches whatever tracking could not (its connection replaced meanwhile).
///
/// Invariant: `connection` is used under its lock only; `adopt` gets overlays in the order read,
/// and the service keeps only newer revisions. Cost: one round trip per kept batch, one read per
/// news and per second; one listener thread and one connection.
package final class RedisAvailability: AvailabilityKeeper {
    package let keptOverlay: AvailabilityOverlay?
    private let key: [UInt8]
    private let connection: Mutex<RedisConnection>
    private let listener: Mutex<RedisInvalidationListener?> = Mutex(nil)
    private let adopt = Mutex<(@Sendable (AvailabilityOverlay) -> Void)?>(nil)
    private let poll: DispatchSourceTimerBox
    private let log: @Sendable (String) -> Void

    /// How often the overlay is read even without news.
    package static let pollInterval = DispatchTimeInterval.seconds(1)

    /// Reads the overlay kept at `endpoint` under `prefix` (none yet, or Redis not reachable now:
    /// nil, read again once it is) and starts following it.
    package init(
        endpoint: RedisEndpoint, options: RedisOptions, prefix: String, log: @escaping @Sendable (String) -> Void
    ) {
        let key = Array((prefix + "availability").utf8)
        self.key = key
        self.log = log
        connection = Mutex(RedisConnection(endpoint: endpoint, options: options))
        poll = DispatchSourceTimerBox(DispatchSource.makeTimerSource(queue: .global(qos: .utility)))
        keptOverlay = try? Self.read(key, on: connection)
        let listener = RedisInvalidationListener(endpoint: endpoint, options: options) { [weak self] event in
            guard let self else { return }
            switch event {
            case .subscribed: refresh()
            case .invalidated(let keys): if keys.contains(key) { refresh() }
            case .flushAll: refresh()
            }
        }
        self.listener.withLock { $0 = listener }
        listener.start()
        poll.source.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval)
        poll.source.setEventHandler { [weak self] in self?.refresh() }
        poll.source.activate()
    }

    deinit { stop() }

    /// Stops following (the listener's thread and the timer).
    package func stop() {
        poll.source.cancel()
        let listener = self.listener.withLock { listener in
            defer { listener = nil }
            return listener
        }
        listener?.stop()
    }

    package func follow(_ adopt: @escaping @Sendable (AvailabilityOverlay) -> Void) {
        self.adopt.withLock { $0 = adopt }
        refresh()
    }

    /// Sets `overlay` when Redis has revision `previous` (0: none kept yet).
    private static let compareAndSet = RedisScript(
        """
        local current = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
        if current ~= tonumber(ARGV[1]) then
          return {0, redis.call('HGET', KEYS[1], 'j') or ''}
        end
        redis.call('HSET', KEYS[1], 'r', ARGV[2], 'j', ARGV[3])
        return {1, ''}
        """)

    package func keep(_ overlay: AvailabilityOverlay, over previous: Int) throws(AvailabilityNotKept) {
        let json = [UInt8](try AvailabilityFile.data(of: overlay))
        let reply: RedisReply
        do {
            reply = try connection.withLock { connection throws(RedisError) -> RedisReply in
                try track(connection)
                return try connection.evaluate(
                    Self.compareAndSet, keys: [key],
                    arguments: [Array(String(previous).utf8), Array(String(overlay.revision).utf8), json])
            }
        } catch {
            throw AvailabilityNotKept("Redis: \(error)")
        }
        guard case .array(let parts) = reply, parts.count == 2, case .integer(let written) = parts[0] else {
            throw AvailabilityNotKept("Redis answered the availability script with \(reply)")
        }
        if written == 1 { return }
        guard case .bulk(let theirs) = parts[1], !theirs.isEmpty else {
            throw AvailabilityNotKept("another instance changed the availability, and Redis has none now")
        }
        let current = try AvailabilityFile.overlay(from: Data(theirs))
        throw AvailabilityNotKept("another instance kept revision \(current.revision) first", current: current)
    }

    /// Reads the overlay and hands it to the service (which keeps only a newer one); a failure
    /// waits for the next news or second.
    private func refresh() {
        guard let adopt = adopt.withLock({ $0 }) else { return }
        do throws(AvailabilityNotKept) {
            guard let overlay = try Self.read(key, on: connection, tracking: self) else { return }
            adopt(overlay)
        } catch {
            log("availability: cannot read it from Redis: \(error); trying again within a second")
        }
    }

    /// The overlay under `key`; nil when none is kept.
    private static func read(
        _ key: [UInt8], on connection: borrowing Mutex<RedisConnection>, tracking: RedisAvailability? = nil
    )
        throws(AvailabilityNotKept) -> AvailabilityOverlay?
    {
        let reply: RedisReply
        do {
            reply = try connection.withLock { connection throws(RedisError) -> RedisReply in
                try tracking?.track(connection)
                return try connection.command([Array("HGET".utf8), key, Array("j".utf8)])
            }
        } catch {
            throw AvailabilityNotKept("Redis: \(error)")
        }
        switch reply {
        case .null: return nil
        case .bulk(let json): return try AvailabilityFile.overlay(from: Data(json))
        default: throw AvailabilityNotKept("Redis answered HGET with \(reply)")
        }
    }

    /// Has Redis send the key's invalidations to the listener's live subscription, once per
    /// subscription and connection (the connection's `mark`, reset by a reconnect).
    private func track(_ connection: RedisConnection) throws(RedisError) {
        guard let subscription = listener.withLock({ $0?.subscription }),
            connection.mark != subscription.generation + 1
        else { return }
        let reply = try connection.command([
            Array("CLIENT".utf8), Array("TRACKING".utf8), Array("on".utf8), Array("REDIRECT".utf8),
            Array(String(subscription.clientID).utf8), Array("BCAST".utf8), Array("PREFIX".utf8), key
        ])
        if reply == .status("OK") { connection.mark = subscription.generation + 1 }
    }
}

/// A Dispatch timer, which is thread-safe; the type only says so to the compiler.
private struct DispatchSourceTimerBox: @unchecked Sendable {
    let source: any DispatchSourceTimer
    init(_ source: any DispatchSourceTimer) { self.source = source }
}
