import Dispatch
import MenuModel
import MenuSessions
import RedisClient
import Synchronization

/// Sessions in Redis, shared by every instance that names the same endpoint and prefix: a
/// session created on one is read and changed on any other, on any menu version.
///
/// Layout: one hash per session, `<prefix>s:<sessionID>` (``RedisSessionRecord``: revision,
/// state by id, history with the menu version its splices belong to), with the idle TTL set by
/// every write and refreshed lazily by reads (``RedisSessionStore/refreshIfDue(_:_:)``).
///
/// Writes are compare-and-set: the new state is computed here from the session at revision R
/// (cached or read), then ``RedisSessionStore/writeScript`` stores it only if Redis still holds
/// R, appending the history entry, setting R + 1 and the TTL in one atomic step; otherwise it
/// answers the record it holds and the write is computed again on it (at least
/// ``RedisStoreOptions/writeAttempts`` rounds, and for at least the Redis timeout). So
/// `If-Match` and the change limit are checked against the revision the write lands on, and two
/// instances writing one session never lose a write. A write that changes nothing sends nothing.
///
/// Reads go through a ``SessionCache`` when ``RedisStoreOptions/trackingCache`` is on and the
/// invalidation listener is subscribed: a cached read costs no Redis call. Otherwise a read is
/// one round trip (`HMGET` + `PTTL`, pipelined); a write one `EVALSHA` (plus a read when the
/// session is not cached; a refusal or a no-op decided on a cached copy is decided again on a
/// read, since that copy may predate another instance's write). Every Redis failure answers ``SessionStoreError/unavailable(reason:)``
/// within the connection timeout, naming the endpoint.
package final class RedisSessionStore: SessionStore {
    package let endpoint: RedisEndpoint
    package let options: RedisStoreOptions
    let pool: RedisConnectionPool
    /// Where ``startApply(_:to:in:if:then:)`` sends its writes; nil when
    /// ``RedisStoreOptions/pipelinedWrites`` is off.
    let pipeline: RedisPipeline?
    let cache: SessionCache<CachedSession>?
    private let listener: RedisInvalidationListener?
    let latest: LatestMenu
    /// Who hears of other instances' writes (``observeOtherWriters(_:)``): Redis's invalidations of
    /// the keys this instance read, through the cache's listener (none without the cache).
    private let otherWriters = OtherWritersObserver()
    /// `<prefix>s:`, the part of every session key before the id.
    let keyPrefix: [UInt8]
    /// `<prefix>index`: every session of the prefix by its last use (see ``writeScript``).
    let indexKey: [UInt8]
    /// `<prefix>counts`: sessions created, expired and evicted on the prefix, by every instance,
    /// and the bytes they count for together.
    let countsKey: [UInt8]
    /// `<prefix>sizes`: the bytes each session of the prefix counts for (see ``writeScript``).
    let sizesKey: [UInt8]
    /// The idle TTL in milliseconds, nil for none.
    let ttlMilliseconds: Int64?
    /// ``RedisStoreOptions/cacheMaxAge`` in milliseconds.
    let cacheMaxAgeMilliseconds: Int64
    /// Writes of one session on this instance go one at a time (``gateCount`` gates by id), so
    /// concurrent writers of a session compete in Redis only across instances, where each round
    /// one of them wins. A write waits for its gate at most the Redis timeout.
    private let writeGates: [WriteGate]
    /// ``evictedHere``.
    let evictions = Atomic<Int>(0)
    /// Where a write of a session starts when the cache has no copy (see ``WriteBasis``).
    let writeBasis: WriteBasis<CachedSession>
    private static var gateCount: Int { 1_024 }

    /// The gate writes of session `id` on this instance pass one at a time.
    func writeGate(of id: SessionID) -> WriteGate { writeGates[Int(id.low % UInt64(Self.gateCount))] }

    /// A session as the cache holds it: the record Redis holds, its state decoded on the menu of
    /// `epoch`, when its TTL runs out by the local clock (nil: no TTL), and when Redis last
    /// confirmed the record (``RedisStoreOptions/cacheMaxAge`` after that it is read again). Memory: the record
    /// (2 + id bytes per changed group, 12 bytes per history entry) plus the decoded state (about
    /// 16 bytes per changed group and overlay entry) and about 150 bytes of fixed parts.
    struct CachedSession: Sendable {
        var record: RedisSessionRecord
        var state: SessionState
        var epoch: MenuEpoch
        var expiresAt: SessionTime?
        var confirmedAt: SessionTime

        /// The bytes the copy holds: the record's arrays, the decoded state, the fixed parts.
        var heapBytes: Int {
            record.state.capacity + record.history.capacity + record.origin.capacity + record.historyVersion.utf8.count
                + state.heapBytes + 160
        }

        /// This copy with its state decoded on the menu of `epoch` instead (record, expiry and
        /// confirmation unchanged).
        func rebased(_ state: SessionState, on epoch: MenuEpoch) -> CachedSession {
            var copy = self
            copy.state = state
            copy.epoch = epoch
            return copy
        }
    }

    package init(endpoint: RedisEndpoint, options: RedisStoreOptions, menu: MenuGeneration) {
        self.endpoint = endpoint
        self.options = options
        latest = LatestMenu(menu)
        keyPrefix = Array((options.prefix + "s:").utf8)
        indexKey = Array((options.prefix + "index").utf8)
        countsKey = Array((options.prefix + "counts").utf8)
        sizesKey = Array((options.prefix + "sizes").utf8)
        ttlMilliseconds = options.sessionTTL.map { max(1, SessionClock.milliseconds(of: $0)) }
        cacheMaxAgeMilliseconds = max(1, SessionClock.milliseconds(of: options.cacheMaxAge))
        writeGates = (0 ..< Self.gateCount).map { _ in WriteGate() }
        let bytesHeldAtMost = SessionLimits.heldBytes(ofBudget: options.sessionMemory)
        writeBasis = WriteBasis(capacity: 16_384, byteCapacity: bytesHeldAtMost / 4) { $0.heapBytes }
        guard options.trackingCache else {
            cache = nil
            listener = nil
            pool = RedisConnectionPool(endpoint: endpoint, options: options.redis)
            pipeline = options.pipelinedWrites ? RedisPipeline(pool: pool, queueTimeout: options.redis.timeout) : nil
            return
        }
        let reference = ListenerReference()
        let cache = SessionCache<CachedSession>(
            capacity: options.cacheCapacity, byteCapacity: bytesHeldAtMost / 4 * 3,
            weigh: { $0.heapBytes }
        ) { reference.generation }
        let prefix = keyPrefix
        let news = otherWriters
        let listener = RedisInvalidationListener(endpoint: endpoint, options: options.redis) { event in
            switch event {
            case .subscribed(let clientID, let generation):
                cache.subscribed(clientID: clientID, generation: generation)
                news.tell(.everything)  // a new subscription: what the lost one would have said is gone
            case .invalidated(let keys):
                for key in keys {
                    guard let id = Self.sessionID(ofKey: key, prefix: prefix) else { continue }
                    cache.invalidate(id)
                    news.tell(.session(id))
                }
            case .flushAll:
                cache.flush()
                news.tell(.everything)
            }
        }
        reference.set(listener)
        self.cache = cache
        self.listener = listener
        pool = RedisConnectionPool(endpoint: endpoint, options: options.redis) { connection throws(RedisError) in
            // The keys a lost connection tracked are tracked no more: nothing read through it may
            // stay. (A thread's first connection replaces none: the cache stays.)
            if connection.connectCount > 1 { cache.flush() }
            if let tracking = cache.tracking { _ = try Self.track(connection, for: tracking) }
        }
        pipeline = options.pipelinedWrites ? RedisPipeline(pool: pool, queueTimeout: options.redis.timeout) : nil
        listener.start()
    }

    /// Ends the invalidation listener and the write pipeline (writes still queued there fail as
    /// unavailable) and empties the cache (reads go to Redis from now on); returns when their
    /// threads have ended. Call it before dropping the store: those threads keep it alive until then.
    package func stop() {
        pipeline?.stop()
        listener?.stop()
        cache?.flush()
    }

    package var currentMenu: MenuGeneration { latest.current }

    /// Sessions this instance's creates evicted at `--max-sessions`, since start (no Redis call).
    package var evictedHere: Int { evictions.load(ordering: .relaxed) }

    /// The bytes this instance holds of sessions: its cache's copies and the last copies it wrote.
    package var heldBytes: Int { (cache?.bytes ?? 0) + writeBasis.bytes }

    /// The prefix's sessions as Redis counts them for every instance (`ZCARD` of the index, whose
    /// entries of expired sessions go at the next create, and the counts and bytes the write
    /// script keeps), with this instance's bytes against `--session-memory`; zeros when Redis
    /// does not answer. Two commands, for a metrics scrape.
    package var sessionCounts: SessionCounts {
        var counts = SessionCounts(bytes: heldBytes, memoryBudget: options.sessionMemory)
        let (indexKey, countsKey) = (indexKey, countsKey)
        let replies = try? redis { connection throws(RedisError) in
            (
                try connection.command([Array("ZCARD".utf8), indexKey]),
                try connection.command(
                    [Array("HMGET".utf8), countsKey] + ["created", "expired", "evicted", "bytes"].map { Array($0.utf8) }
                )
            )
        }
        guard let (held, figures) = replies else { return counts }
        if case .integer(let value) = held { counts.held = value }
        if case .array(let values) = figures {
            let numbers = values.map { value -> Int in
                if case .bulk(let bytes) = value { Int(String(decoding: bytes, as: UTF8.self)) ?? 0 } else { 0 }
            }
            if numbers.count == 4 {
                (counts.created, counts.expired, counts.evicted) = (numbers[0], numbers[1], numbers[2])
                counts.storeBytes = numbers[3]
            }
        }
        return counts
    }

    // MARK: SessionStore

    package func create(in menu: MenuGeneration, state: SessionState) throws(SessionStoreError) -> SessionID {
        latest.note(menu)
        let state = try state.checkedForNewSession(
            maxChangedGroups: options.maxChangedGroups, maxStateBytes: options.maxStateBytes)
        return try insert(state, recording: nil, in: menu).0
    }

    package func delete(_ id: SessionID) throws(SessionStoreError) {
        let keys = [key(of: id), indexKey, countsKey, sizesKey]
        let reply = try redis { connection throws(RedisError) in
            try connection.evaluate(Self.deleteScript, keys: keys, arguments: [id.utf8])
        }
        cache?.invalidate(id)  // NOLOOP: Redis reports this to the instance's other connections only
        writeBasis.forget(id)
        switch reply {
        case .integer(1): return
        case .integer(0): throw .unknownSession
        default: throw unexpected(reply, to: "the session delete script")
        }
    }

    package func snapshot(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> SessionSnapshot {
        try snapshot(of: id, in: menu, atLeast: 0)
    }

    /// Its sessions are cached copies of Redis's, which other instances write.
    package var refreshesCopies: Bool { true }

    /// With the cache on, Redis reports every write of a key this instance read (tracking), and
    /// a new subscription of the listener (after a lost one) as `.everything`; without it, nothing.
    package func observeOtherWriters(_ observer: @escaping @Sendable (OtherWriterNews) -> Void) {
        otherWriters.set(observer)
    }

    package func snapshot(of id: SessionID, in menu: MenuGeneration, atLeast revision: Int) throws(SessionStoreError)
        -> SessionSnapshot
    {
        latest.note(menu)
        let session = try carriedIfDue(try session(id, in: menu, atLeast: revision), of: id, in: menu)
        return SessionSnapshot(state: try state(of: session, id: id, in: menu), revision: session.record.revision)
    }

    package func apply(
        _ command: SessionCommand, to id: SessionID?, in menu: MenuGeneration,
        if condition: RevisionCondition?
    ) throws(SessionStoreError) -> AppliedChange {
        latest.note(menu)
        guard let id else {
            // A write without a session: the default view at revision 0, then a new session holding the result.
            if let condition, !condition.admits(0) { throw .revisionMismatch(current: 0) }
            var view = FlattenedView(menu: menu.menu)
            let outcome = try command.run(
                on: &view, maxChangedGroups: options.maxChangedGroups, maxStateBytes: options.maxStateBytes)
            let (newID, revision) = try insert(
                view.state, recording: outcome.changedState ? outcome.change.historyEntry : nil, in: menu)
            return AppliedChange(
                sessionID: newID, created: true, change: outcome.change, state: view.state, revision: revision)
        }
        let gate = writeGate(of: id)
        guard gate.wait(timeout: options.redis.timeout) else {
            throw .unavailable(
                reason: "another write of session \(id) on this instance has waited on \(endpointName) for longer "
                    + "than \(options.redis.timeout); nothing was changed, retry")
        }
        defer { gate.release() }
        // A refusal or a no-op decided on a cached copy may be out of date (a write of another
        // instance whose invalidation is still on its way): those are decided again on a copy
        // read from Redis by this call. Writes need not be: the script checks the revision.
        let cached = cache?.value(of: id) ?? writeBasis.value(of: id)
        var session: CachedSession
        if let cached { session = cached } else { session = try self.session(id, in: menu, atLeast: 0) }
        var fresh = cached == nil
        // Rounds go on past `writeAttempts` until the Redis timeout has passed too: on a loaded
        // machine one instance's queue can win many rounds in a row without the other stalling.
        let deadline = ContinuousClock.now + options.redis.timeout
        var attempt = 0
        while attempt < options.writeAttempts || ContinuousClock.now < deadline {
            attempt += 1
            let carried = try carriedIfDue(session, of: id, in: menu)
            if carried.record != session.record { (session, fresh) = (carried, true) }
            let revision = session.record.revision
            var view = FlattenedView(menu: menu.menu)
            let outcome: SessionCommand.Outcome
            do throws(SessionStoreError) {
                if let condition, !condition.admits(revision) { throw .revisionMismatch(current: revision) }
                view = FlattenedView(menu: menu.menu, state: try state(of: session, id: id, in: menu))
                outcome = try command.run(
                    on: &view, maxChangedGroups: options.maxChangedGroups, maxStateBytes: options.maxStateBytes)
            } catch {
                if case .expansion = error { throw error }  // the menu's answer, whatever the state
                guard fresh else {
                    (session, fresh) = (try self.session(id, in: menu, atLeast: 0, fromRedis: true), true)
                    continue
                }
                throw error
            }
            guard outcome.changedState else {
                guard fresh else {
                    (session, fresh) = (try self.session(id, in: menu, atLeast: 0, fromRedis: true), true)
                    continue
                }
                return AppliedChange(
                    sessionID: id, created: false, change: outcome.change, state: view.state, revision: revision)
            }
            let encoded = RedisSessionRecord.encodeState(view.state.portable(in: menu.menu))
            let written = session.record.advanced(
                to: encoded, entry: outcome.change.historyEntry, menuVersion: menu.menu.version,
                historyLimit: options.historyLimit)
            switch try write(
                written, entry: RedisHistory.entry(outcome.change.historyEntry), of: id, over: revision,
                state: view.state,
                in: menu)
            {
            case .written:
                return AppliedChange(
                    sessionID: id, created: false, change: outcome.change, state: view.state, revision: written.revision
                )
            case .missing: throw .unknownSession
            case .moved(let current): (session, fresh) = (current, true)  // another instance won this round: again, on its record
            }
        }
        throw .unavailable(
            reason: "session \(id) was changed by other writers \(attempt) times in \(options.redis.timeout) while "
                + "this write was computed; nothing was changed, retry")
    }

    package func changes(of id: SessionID, since: Int, in menu: MenuGeneration) throws(SessionStoreError)
        -> SessionChanges
    {
        latest.note(menu)
        // `since` is a revision the client holds: a cached copy older than it is fetched.
        let record = try carriedIfDue(try session(id, in: menu, atLeast: since), of: id, in: menu).record
        guard let entries = record.entries(since: since, menuVersion: menu.menu.version) else {
            let later =
                record.historyVersion != menu.menu.version
                && ReloadOrigin(record.origin)?.version == menu.menu.version
            return SessionChanges(revision: record.revision, entries: nil, onALaterMenu: later)
        }
        var answered: [ChangeEntry] = []
        answered.reserveCapacity(entries.count)
        for entry in entries {
            if let written = entry.entry {
                answered.append(ChangeEntry(revision: entry.revision, written))
                continue
            }
            // The reload's splices need the menu it came from: only while this instance keeps it.
            guard let mark = reloadMark(of: record, id: id, in: menu) else {
                return SessionChanges(revision: record.revision, entries: nil)
            }
            answered.append(ChangeEntry(revision: entry.revision, reload: mark))
        }
        return SessionChanges(revision: record.revision, entries: answered)
    }

    /// Sessions are carried over to a new menu as a write of their own (a reload entry), by the
    /// first instance on the new menu that still keeps the one before it.
    package var recordsReloads: Bool { true }

    /// The reload entry's mark of `record` on `menu`: its origin's state decoded on the menu this
    /// instance had before `menu`; nil when that menu is not kept (or is not the origin's).
    private func reloadMark(of record: RedisSessionRecord, id: SessionID, in menu: MenuGeneration) -> ReloadMark? {
        guard let previous = menu.epoch.previousMenu, let origin = ReloadOrigin(record.origin),
            origin.version == previous.version,
            let state = try? RedisSessionRecord.state(of: origin.state, on: previous, key: keyText(of: id))
        else { return nil }
        return ReloadMark(to: menu.epoch, state: state)
    }

    /// Whether `record`, read on `menu`, is to be carried over first (``carriedIfDue(_:of:in:)``):
    /// last written on the menu this instance had just before `menu` and still keeps. The version
    /// compare first: a session written on `menu` (the steady state) takes no lock.
    func carryIsDue(_ record: RedisSessionRecord, in menu: MenuGeneration) -> Bool {
        record.historyVersion != menu.menu.version && record.historyVersion == menu.epoch.previousMenu?.version
    }

    /// `session` carried over to `menu` when it was last written on the menu this instance had
    /// just before (and still keeps): one compare-and-set write of a reload entry, so every
    /// instance sees the carry-over as one revision. Unchanged otherwise: a session written on
    /// `menu` already, on an older menu than the one before (its feed starts over), or that the
    /// byte budget has no room to grow for. Another instance's write in between is carried over
    /// in turn (at most ``RedisStoreOptions/writeAttempts`` rounds).
    func carriedIfDue(_ session: CachedSession, of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError)
        -> CachedSession
    {
        guard carryIsDue(session.record, in: menu) else { return session }
        var session = session
        for _ in 0 ..< options.writeAttempts {
            let record = session.record.carried(to: menu.menu.version, historyLimit: options.historyLimit)
            let outcome: WriteOutcome
            do {
                outcome = try write(
                    record, entry: RedisHistory.reloadEntry, of: id, over: session.record.revision,
                    state: try state(of: session, id: id, in: menu), in: menu)
            } catch .sessionMemoryFull, .tooManySessions {
                return session
            }
            switch outcome {
            case .written: return writeBasis.value(of: id) ?? session
            case .missing: throw .unknownSession
            case .moved(let current):
                guard carryIsDue(current.record, in: menu) else { return current }
                session = current
            }
        }
        return session
    }

    package func readinessProblem() -> String? {
        do {
            let reply = try redis { connection throws(RedisError) in try connection.command("PING") }
            return reply == .status("PONG") ? nil : "\(endpointName) answered PING with \(reply)"
        } catch {
            if case .unavailable(let reason) = error { return reason }
            return error.description
        }
    }

    /// Redis holds states by id, so nothing there changes; the cache's decoded states belong to
    /// the old menu and are decoded again on `menu` (each installed only if the session was not
    /// changed meanwhile): `rebased` counts them. O(cached sessions · k (depth + log k)).
    @discardableResult
    package func adopt(_ menu: MenuGeneration) -> SessionRebaseReport {
        latest.note(menu)
        var report = SessionRebaseReport()
        guard let cache else { return report }
        for id in cache.cachedIDs {
            guard let old = cache.value(of: id), old.epoch !== menu.epoch,
                let state = try? old.record.state(on: menu.menu, key: keyText(of: id))
            else { continue }
            var installed = false
            cache.update(id) { current in
                guard current.record == old.record, current.epoch === old.epoch else { return current }
                installed = true
                return current.rebased(state, on: menu.epoch)
            }
            if installed { report.rebased += 1 }
        }
        return report
    }

    /// The session's state on `menu`: the cached one when it belongs to `menu`, else decoded
    /// from the record by id (and cached so when `menu` is the newest).
    func state(of session: CachedSession, id: SessionID, in menu: MenuGeneration) throws(SessionStoreError)
        -> SessionState
    {
        if session.epoch === menu.epoch { return session.state }
        let state: SessionState
        do { state = try session.record.state(on: menu.menu, key: keyText(of: id)) } catch {
            throw .unavailable(reason: error.description)
        }
        if menu.epoch === latest.current.epoch {
            cache?.update(id) { current in
                guard current.record == session.record else { return current }
                return current.rebased(state, on: menu.epoch)
            }
        }
        return state
    }

    /// The listener, set once the closures that need it exist: what the cache asks for the
    /// subscription generation (nil while the listener is down). Weak: the listener's event
    /// closure holds the cache, which holds this; the store owns the listener.
    private final class ListenerReference: Sendable {
        private struct WeakListener: Sendable { weak var listener: RedisInvalidationListener? }
        private let listener = Mutex(WeakListener())
        func set(_ listener: RedisInvalidationListener) { self.listener.withLock { $0.listener = listener } }
        var generation: Int? { listener.withLock { $0.listener }?.subscription?.generation }
    }
}

/// The one observer of other instances' writes, set once and called from the listener's thread.
private final class OtherWritersObserver: Sendable {
    private let observer = Mutex<(@Sendable (OtherWriterNews) -> Void)?>(nil)
    func set(_ observer: @escaping @Sendable (OtherWriterNews) -> Void) { self.observer.withLock { $0 = observer } }
    func tell(_ news: OtherWriterNews) { observer.withLock { $0 }?(news) }
}
