import MenuModel
import MenuSessions
import RedisClient
import Synchronization

/// The Redis side of ``RedisSessionStore``: reads, the compare-and-set write, TTL refreshes,
/// tracking registration and the translation of Redis failures into store errors.
extension RedisSessionStore {
    /// Stores `written` over revision `expected` of `id` (nil: create, the key must not exist),
    /// atomically in Redis, and caches it. One `EVALSHA` (the script is sent once per
    /// connection; again after a `NOSCRIPT`).
    enum WriteOutcome {
        case written
        /// No session (a write), or the id is taken (a create).
        case missing
        /// Redis holds another revision: the record it holds.
        case moved(CachedSession)
    }

    /// KEYS[1] the session's hash, KEYS[2] the prefix's index of sessions by last use (a sorted
    /// set, `<prefix>index`: id → Redis time in milliseconds), KEYS[3] the prefix's counts (a
    /// hash, `<prefix>counts`: created, expired, evicted, and `bytes`, the sum of the sizes),
    /// KEYS[4] the prefix's sizes (a hash, `<prefix>sizes`: id → the bytes the session counts
    /// for). ARGV: [1] the revision the new state was computed on ('' to create: the key must not
    /// exist), [2] the state, [3] the menu version of the splice, [4] the history entry ('' for
    /// none: a session created at revision 0), [5] history bytes kept at most, [6] the idle TTL in
    /// milliseconds ('' for none), [7] sessions the prefix holds at most, [8] the idle
    /// milliseconds after which one may be evicted, [9] the session keys' prefix (`<prefix>s:`),
    /// [10] the bytes the prefix's sessions may count for together, [11] the bytes a session
    /// counts for beside its state and history (its key, fields, TTL, index and size entries),
    /// [12] the record's `o` field after the write ('' for none: see ``RedisSessionRecord``).
    /// Answers the new revision, -1 for no session (or a taken id), the fields of the record Redis
    /// holds at another revision, the new revision followed by the ids of sessions the write
    /// evicted (the instance running the script is not told of its own deletions: `NOLOOP`), or,
    /// when no other session has been idle long enough, -2 (a create at the count bound) or -3 (a
    /// create, or a write that grows its session, at the byte bound) followed by the seconds until
    /// one will have been and the ids of sessions evicted on the way: then the session is not
    /// written.
    /// A create, and a growing write that does not fit, first drop index entries whose TTL has run out (and any whose key is gone),
    /// then evicting the least recently used session idle for ARGV[8], never the one written:
    /// the count and the bytes across every instance on the prefix, checked atomically with the
    /// write. A session's size is the length of its state, history and origin plus ARGV[11].
    /// It reads the key again after writing it: tracking is `NOLOOP` (Redis does not report a
    /// connection's own writes to it), and a write ends every client's tracking of the key, so
    /// without that read the next write of another client would not be reported here either.
    static let writeScript = RedisScript(
        """
        local key = KEYS[1]
        local held = redis.call('HMGET', key, 'r', 'v', 'h', 'o')
        local revision = held[1]
        local history = ''
        local nextRevision = 0
        \(nowInMilliseconds)
        local id = string.sub(key, #ARGV[9] + 1)
        local evicted = {}
        local expiredCount, evictedCount = 0, 0
        local total = nil
        local totalMoved = false
        local function forget(member)
          local size = tonumber(redis.call('HGET', KEYS[4], member)) or 0
          redis.call('HDEL', KEYS[4], member)
          redis.call('ZREM', KEYS[2], member)
          total = total - size
          totalMoved = true
        end
        local function makeRoom(extra, slot)
          local limit, budget, looked = tonumber(ARGV[7]), tonumber(ARGV[10]), 0
          if not slot and total + extra <= budget then return nil end
          if ARGV[6] ~= '' then
            local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - tonumber(ARGV[6])), 'LIMIT', 0, 256)
            for _, member in ipairs(expired) do
              if member ~= id then forget(member); expiredCount = expiredCount + 1 end
            end
          end
          while true do
            local countFull = slot and redis.call('ZCARD', KEYS[2]) >= limit
            if not countFull and total + extra <= budget then return nil end
            local reason = countFull and -2 or -3
            local oldest = redis.call('ZRANGE', KEYS[2], 0, 1, 'WITHSCORES')
            local member, score = oldest[1], oldest[2]
            if member == id then member, score = oldest[3], oldest[4] end
            if not member then
              if redis.call('ZCARD', KEYS[2]) > 0 or total == 0 then return {reason, 1} end
              total = 0
              totalMoved = true
              redis.call('DEL', KEYS[4])
            elseif redis.call('EXISTS', ARGV[9] .. member) == 0 then
              forget(member)
              expiredCount = expiredCount + 1
            elseif now - tonumber(score) >= tonumber(ARGV[8]) then
              redis.call('DEL', ARGV[9] .. member)
              forget(member)
              evictedCount = evictedCount + 1
              evicted[#evicted + 1] = member
            else
              return {reason, math.ceil((tonumber(ARGV[8]) - (now - tonumber(score))) / 1000)}
            end
            looked = looked + 1
            if looked >= 64 then return {reason, 1} end
          end
        end
        if ARGV[1] == '' then
          if revision then return -1 end
          if ARGV[4] ~= '' then nextRevision = 1 end
        else
          if not revision then return -1 end
          if revision ~= ARGV[1] then return redis.call('HMGET', key, 'r', 's', 'v', 'h', 'o') end
          nextRevision = tonumber(revision) + 1
          if held[2] == ARGV[3] then history = held[3] or '' end
        end
        if ARGV[4] ~= '' then
          history = history .. ARGV[4]
          local limit = tonumber(ARGV[5])
          if #history > limit then history = string.sub(history, #history - limit + 1) end
        end
        local size = #ARGV[2] + #history + #ARGV[12] + tonumber(ARGV[11])
        local previous = 0
        if revision then previous = tonumber(redis.call('HGET', KEYS[4], id)) or 0 end
        local full = nil
        if not revision or size > previous then
          total = tonumber(redis.call('HGET', KEYS[3], 'bytes')) or 0
          full = makeRoom(size - previous, not revision)
        end
        if expiredCount > 0 then redis.call('HINCRBY', KEYS[3], 'expired', expiredCount) end
        if evictedCount > 0 then redis.call('HINCRBY', KEYS[3], 'evicted', evictedCount) end
        if totalMoved then redis.call('HSET', KEYS[3], 'bytes', total) end
        if full then return {full[1], full[2], unpack(evicted)} end
        if not revision then redis.call('HINCRBY', KEYS[3], 'created', 1) end
        redis.call('HSET', key, 'r', string.format('%d', nextRevision), 's', ARGV[2], 'v', ARGV[3], 'h', history)
        if ARGV[12] ~= '' then redis.call('HSET', key, 'o', ARGV[12]) elseif held[4] then redis.call('HDEL', key, 'o') end
        if ARGV[6] ~= '' then redis.call('PEXPIRE', key, ARGV[6]) end
        redis.call('ZADD', KEYS[2], now, id)
        if size ~= previous then
          redis.call('HSET', KEYS[4], id, size)
          redis.call('HINCRBY', KEYS[3], 'bytes', size - previous)
        end
        redis.call('HGET', key, 'r')
        if #evicted > 0 then return {nextRevision, unpack(evicted)} end
        return nextRevision
        """)

    /// KEYS[1] the session's hash, KEYS[2] the prefix's index (see ``writeScript``), ARGV[1] the
    /// idle TTL in milliseconds, ARGV[2] the session's id: sets the TTL and the last use and answers
    /// the revision (-1: no session), reading the key after the PEXPIRE so that it stays tracked
    /// (see ``writeScript``).
    static let refreshScript = RedisScript(
        """
        local revision = redis.call('HGET', KEYS[1], 'r')
        if not revision then return -1 end
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        \(nowInMilliseconds)
        redis.call('ZADD', KEYS[2], now, ARGV[2])
        redis.call('HGET', KEYS[1], 'r')
        return tonumber(revision)
        """)

    /// KEYS[1] the session's hash, KEYS[2] the index, KEYS[3] the counts, KEYS[4] the sizes (see
    /// ``writeScript``), ARGV[1] the session's id: deletes the session with its index entry and
    /// its size, taken off the prefix's bytes; answers 1, or 0 when Redis held no session.
    static let deleteScript = RedisScript(
        """
        local deleted = redis.call('DEL', KEYS[1])
        redis.call('ZREM', KEYS[2], ARGV[1])
        local size = tonumber(redis.call('HGET', KEYS[4], ARGV[1]))
        if size then
          redis.call('HDEL', KEYS[4], ARGV[1])
          redis.call('HINCRBY', KEYS[3], 'bytes', -size)
        end
        return deleted
        """)

    /// Creates a session holding `state` under a fresh id: at revision 0, or at 1 with `entry`
    /// recorded when given (a write without a session that changed the default view).
    func insert(_ state: SessionState, recording entry: HistoryEntry?, in menu: MenuGeneration)
        throws(SessionStoreError) -> (SessionID, Int)
    {
        let version = menu.menu.version
        let encoded = RedisSessionRecord.encodeState(state.portable(in: menu.menu))
        var record = RedisSessionRecord(revision: 0, state: encoded, historyVersion: version, history: [])
        if let entry {
            record = record.advanced(
                to: encoded, entry: entry, menuVersion: version, historyLimit: options.historyLimit)
        }
        let entryBytes = entry.map { RedisHistory.entry($0) } ?? []
        // 128 random bits: a taken id is all but impossible, but SET-if-absent makes it harmless.
        for _ in 0 ..< 4 {
            let id = SessionID.random()
            if case .written = try write(record, entry: entryBytes, of: id, over: nil, state: state, in: menu) {
                return (id, record.revision)
            }
        }
        throw .unavailable(
            reason: "\(endpointName) had every fresh session id taken 4 times in a row under prefix \(options.prefix)")
    }

    /// `entry` is the history entry of the write (empty for a session created at revision 0).
    func write(
        _ record: RedisSessionRecord, entry: [UInt8], of id: SessionID, over expected: Int?, state: SessionState,
        in menu: MenuGeneration
    ) throws(SessionStoreError) -> WriteOutcome {
        let key = key(of: id)
        let arguments = writeArguments(record, entry: entry, over: expected, in: menu)
        let keys = scriptKeys(key)
        let (reply, fill, tracked) = try filling(id) { connection throws(RedisError) in
            try connection.evaluate(Self.writeScript, keys: keys, arguments: arguments)
        }
        return try finishWrite(
            reply, tracked: tracked, fill: fill, record, of: id, over: expected, state: state, in: menu)
    }

    /// ``writeScript``'s ARGV for `record` (see there).
    func writeArguments(_ record: RedisSessionRecord, entry: [UInt8], over expected: Int?, in menu: MenuGeneration)
        -> [[UInt8]]
    {
        [
            Array((expected.map(String.init) ?? "").utf8), record.state, Array(menu.menu.version.utf8), entry,
            Array(String(max(0, options.historyLimit) * RedisHistory.entrySize).utf8),
            Array((ttlMilliseconds.map { String($0) } ?? "").utf8),
            Array(String(options.maxSessions).utf8),
            Array(String(SessionClock.milliseconds(of: options.evictionIdle)).utf8), keyPrefix,
            Array(String(options.sessionMemory).utf8), Array(String(Self.sessionOverheadBytes).utf8), record.origin
        ]
    }

    /// The keys ``writeScript`` names: the session's, the index's, the counts', the sizes'.
    func scriptKeys(_ sessionKey: [UInt8]) -> [[UInt8]] { [sessionKey, indexKey, countsKey, sizesKey] }

    /// The bytes a session counts for in Redis beside its state and history: its key and hash
    /// fields, its TTL, its entries in the index and the sizes. Measured with `INFO memory` over
    /// 10,000 sessions (``RedisStoreTests``).
    static let sessionOverheadBytes = 448

    /// What ``writeScript``'s `reply` means for the write of `record`, with the cache and the write
    /// basis brought up to date (`fill` finished when the write landed on a tracked connection,
    /// given back otherwise).
    func finishWrite(
        _ reply: RedisReply, tracked: Bool, fill: SessionCache<CachedSession>.Fill?, _ record: RedisSessionRecord,
        of id: SessionID, over expected: Int?, state: SessionState,
        in menu: MenuGeneration
    ) throws(SessionStoreError) -> WriteOutcome {
        var reply = reply
        if case .array(let items) = reply, case .integer(let code)? = items.first {
            // A write that evicted sessions (after them, or before finding none idle enough to
            // make room): Redis reports their deletion to every instance but this one.
            let refused = code == -2 || code == -3
            for case .bulk(let text) in items.dropFirst(refused ? 2 : 1) {
                guard let evicted = SessionID(String(decoding: text, as: UTF8.self)) else { continue }
                evictions.add(1, ordering: .relaxed)
                cache?.invalidate(evicted)
                writeBasis.forget(evicted)
            }
            if refused {
                fill.map { cache?.cancelFill($0) }
                var wait = 1
                if items.count > 1, case .integer(let seconds) = items[1] { wait = min(max(1, seconds), 86_400) }
                if code == -2 { throw .tooManySessions(limit: options.maxSessions, retryAfterSeconds: wait) }
                throw .sessionMemoryFull(budget: options.sessionMemory, retryAfterSeconds: wait)
            }
            reply = .integer(code)
        }
        switch reply {
        case .integer(let revision) where revision == record.revision:
            let written = CachedSession(
                record: record, state: state, epoch: menu.epoch, expiresAt: expiry(afterMilliseconds: ttlMilliseconds),
                confirmedAt: SessionClock.now())
            if let fill { if tracked { cache?.finishFill(fill, written) } else { cache?.cancelFill(fill) } }
            writeBasis.keep(written, of: id)
            return .written
        case .integer(-1):
            fill.map { cache?.cancelFill($0) }
            writeBasis.forget(id)
            return .missing
        case .array(let fields):
            fill.map { cache?.cancelFill($0) }
            guard let current = try session(fromFields: fields, of: id, in: menu, remaining: nil) else {
                writeBasis.forget(id)
                return .missing
            }
            writeBasis.keep(current, of: id)
            return .moved(current)
        case .error(let message):
            fill.map { cache?.cancelFill($0) }
            throw .unavailable(
                reason: "\(endpointName) refused the write of session \(id): \(message); nothing was changed")
        default:
            fill.map { cache?.cancelFill($0) }
            throw unexpected(reply, to: "the session write script")
        }
    }

    /// The session `id` at `revision` or later: the cached copy when there is one that recent
    /// (no Redis call, but a TTL refresh when due), else read from Redis (one round trip) and
    /// cached. `.unknownSession` when Redis holds none.
    /// `fromRedis` skips the cached copy (the read still fills the cache).
    func session(_ id: SessionID, in menu: MenuGeneration, atLeast revision: Int, fromRedis: Bool = false)
        throws(SessionStoreError) -> CachedSession
    {
        if !fromRedis, let cached = cache?.value(of: id), cached.record.revision >= revision,
            isConfirmedRecently(cached)
        {
            try refreshIfDue(id, cached)
            return cached
        }
        let key = key(of: id)
        let (replies, fill, tracked) = try filling(id) { connection throws(RedisError) in
            let read = [
                [Array("HMGET".utf8), key] + RedisSessionRecord.fieldNames.map { Array($0.utf8) },
                [Array("PTTL".utf8), key]
            ]
            return try connection.pipeline(read)
        }
        guard replies.count == 2, case .array(let fields) = replies[0], case .integer(let remaining) = replies[1] else {
            fill.map { cache?.cancelFill($0) }
            throw unexpected(.array(replies), to: "HMGET + PTTL")
        }
        guard let session = try session(fromFields: fields, of: id, in: menu, remaining: remaining) else {
            fill.map { cache?.cancelFill($0) }
            throw .unknownSession
        }
        if let fill { if tracked { cache?.finishFill(fill, session) } else { cache?.cancelFill(fill) } }
        try refreshIfDue(id, session)
        return session
    }

    /// The session a record's fields describe, decoded on `menu`; nil when the key holds none.
    /// `remaining` is the key's PTTL (nil: just written, the full TTL).
    private func session(
        fromFields fields: [RedisReply], of id: SessionID, in menu: MenuGeneration,
        remaining: Int?
    ) throws(SessionStoreError) -> CachedSession? {
        var values: [[UInt8]?] = []
        for field in fields {
            switch field {
            case .bulk(let bytes): values.append(bytes)
            case .null: values.append(nil)
            default: throw unexpected(.array(fields), to: "HMGET")
            }
        }
        do {
            guard let record = try RedisSessionRecord(fields: values, key: keyText(of: id)) else { return nil }
            let expiresAt: SessionTime? =
                switch remaining {
                case nil: expiry(afterMilliseconds: ttlMilliseconds)
                case let milliseconds? where milliseconds >= 0: expiry(afterMilliseconds: Int64(milliseconds))
                default: nil  // -1: no TTL
                }
            return CachedSession(
                record: record, state: try record.state(on: menu.menu, key: keyText(of: id)), epoch: menu.epoch,
                expiresAt: expiresAt, confirmedAt: SessionClock.now())
        } catch {
            throw .unavailable(reason: error.description)
        }
    }

    private func expiry(afterMilliseconds milliseconds: Int64?) -> SessionTime? {
        milliseconds.map { SessionClock.now().advanced(byMilliseconds: $0) }
    }

    /// Whether a cached copy may still be served: Redis confirmed it less than
    /// ``RedisStoreOptions/cacheMaxAge`` ago. Tracking reports every change while the connection
    /// that read the key lives; this bounds how long a copy can be served should Redis have
    /// dropped that connection (its idle `timeout`, `CLIENT KILL`) unnoticed.
    private func isConfirmedRecently(_ session: CachedSession) -> Bool {
        SessionClock.now().milliseconds(since: session.confirmedAt) < cacheMaxAgeMilliseconds
    }

    /// A session's TTL is refreshed once less than 3/4 of it is left: at most one PEXPIRE per
    /// TTL/4 per session and instance, so a session used at least every 3/4 TTL never expires,
    /// and one idle expires between 3/4 TTL and TTL after its last use.
    private func isRefreshDue(_ session: CachedSession) -> Bool {
        guard let ttl = ttlMilliseconds, let expiresAt = session.expiresAt else { return false }
        return expiresAt.milliseconds(since: SessionClock.now()) < ttl - ttl / 4
    }

    /// Sets the TTL again when due (``refreshScript``, one call); a session Redis no longer holds
    /// is `.unknownSession`. The cached copy keeps serving, with its new expiry, only while Redis
    /// still holds its revision.
    func refreshIfDue(_ id: SessionID, _ session: CachedSession) throws(SessionStoreError) {
        guard isRefreshDue(session), let ttl = ttlMilliseconds else { return }
        let keys = [key(of: id), indexKey]
        let reply = try redis { connection throws(RedisError) in
            try connection.evaluate(
                Self.refreshScript, keys: keys, arguments: [Array(String(ttl).utf8), id.utf8])
        }
        switch reply {
        case .integer(let revision) where revision >= 0:
            cache?.update(id) { current in
                guard current.record.revision == revision else { return nil }  // Redis moved on: read it again
                var current = current
                current.expiresAt = expiry(afterMilliseconds: ttl)
                current.confirmedAt = SessionClock.now()
                return current
            }
        case .integer(-1):
            cache?.invalidate(id)
            writeBasis.forget(id)
            throw .unknownSession
        default: throw unexpected(reply, to: "the TTL refresh script")
        }
    }

    /// Registers `connection` for tracking under `tracking` unless it is already (its `mark` is
    /// the generation + 1, so a fresh connection's 0 means none); false when Redis refuses
    /// (the listener's connection is gone): then nothing read through it may be cached.
    /// `NOLOOP`: Redis does not report this connection's own writes to it; the store updates its
    /// cache with them itself, and its scripts read the key last so that it stays tracked.
    static func track(_ connection: RedisConnection, for tracking: SessionCache<CachedSession>.Tracking)
        throws(RedisError) -> Bool
    {
        if connection.mark == tracking.generation + 1 { return true }
        let reply = try connection.command("CLIENT", "TRACKING", "on", "REDIRECT", String(tracking.clientID), "NOLOOP")
        guard reply == .status("OK") else { return false }
        connection.mark = tracking.generation + 1
        return true
    }

    // MARK: Keys and errors

    func key(of id: SessionID) -> [UInt8] { keyPrefix + id.utf8 }

    func keyText(of id: SessionID) -> String { String(decoding: key(of: id), as: UTF8.self) }

    /// The session a key invalidated by Redis names; nil for keys of other prefixes or forms.
    static func sessionID(ofKey key: [UInt8], prefix: [UInt8]) -> SessionID? {
        guard key.count == prefix.count + 22, key.starts(with: prefix) else { return nil }
        return key[prefix.count...].withUnsafeBytes { SessionID(utf8: $0) }
    }

    /// Runs `body` on a connection and waits; a Redis failure is `.unavailable`. With the cache
    /// and the write pipeline on, that is the pipeline's connection (``RedisPipeline/perform(_:)``),
    /// so that every key this instance reads and writes is tracked on the one connection whose
    /// own writes `NOLOOP` keeps from invalidating the copies they leave; otherwise the calling
    /// thread's own connection.
    func redis<Result: Sendable>(_ body: @escaping @Sendable (RedisConnection) throws(RedisError) -> Result)
        throws(SessionStoreError) -> Result
    {
        do {
            if cache != nil, let pipeline { return try pipeline.perform(body) }
            return try pool.withConnection(body)
        } catch {
            throw unavailable(error)
        }
    }

    /// ``redis(_:)`` with a cache placeholder for `id` put in, and the connection registered for
    /// its tracking, right before `body` sends its commands (``beginFill(of:in:on:)``); the
    /// placeholder is given back when they fail. Returns `body`'s result, the placeholder (nil
    /// without the cache) and whether the connection is tracked.
    private func filling<Result: Sendable>(
        _ id: SessionID, _ body: @escaping @Sendable (RedisConnection) throws(RedisError) -> Result
    ) throws(SessionStoreError) -> (Result, SessionCache<CachedSession>.Fill?, Bool) {
        let cache = self.cache
        return try redis { connection throws(RedisError) in
            let (fill, tracked) = try Self.beginFill(of: id, in: cache, on: connection)
            do throws(RedisError) {
                return (try body(connection), fill, tracked)
            } catch {
                fill.map { cache?.cancelFill($0) }
                throw error
            }
        }
    }

    /// A cache placeholder for `id` (nil without the cache, or while it may not be used) with
    /// `connection` registered for its tracking (false: Redis refused, so nothing read through it
    /// may be cached); given back when the registration fails. Called on the connection's own
    /// thread right before the commands go out, so placeholders are put in the order the commands
    /// reach Redis: on the one connection a caching store sends everything through, a read sent
    /// before this instance's write of the session cannot install its older copy after the
    /// write's (`NOLOOP`: no invalidation would come), since the later placeholder replaces the
    /// earlier one.
    static func beginFill(
        of id: SessionID, in cache: SessionCache<CachedSession>?,
        on connection: RedisConnection
    ) throws(RedisError) -> (fill: SessionCache<CachedSession>.Fill?, tracked: Bool) {
        guard let fill = cache?.beginFill(id) else { return (nil, false) }
        do {
            return (fill, try track(connection, for: fill.tracking))
        } catch {
            cache?.cancelFill(fill)
            throw error
        }
    }

    /// The endpoint as messages name it: `redis 127.0.0.1:6379`, `redis /run/redis.sock`, plus
    /// ` db N` for a database other than 0 (never the password).
    var endpointName: String {
        let place =
            switch endpoint.address {
            case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            case .unix(let path): path
            }
        return "redis \(place)" + (endpoint.database == 0 ? "" : " db \(endpoint.database)")
    }

    /// What an operator reads: the endpoint (password redacted) and what failed.
    func unavailable(_ error: RedisError) -> SessionStoreError {
        let reason =
            switch error {
            case .connectFailed(let detail): "\(endpointName) unreachable: \(detail)"
            case .connectionLost(let detail):
                "\(endpointName) did not answer within \(milliseconds(options.redis.timeout)) or dropped the connection (\(detail)); "
                    + "a write in flight may or may not have been applied"
            case .backingOff(let retryAfter):
                "\(endpointName) unreachable (it failed just now; next attempt in \(milliseconds(retryAfter)))"
            case .protocolViolation(let detail): "\(endpointName) answered something unexpected: \(detail)"
            case .queuedTooLong(let waited, let ahead):
                "this request waited \(milliseconds(waited)) (--redis-timeout) queued behind \(ahead) other command\(ahead == 1 ? "" : "s") "
                    + "(other sessions' writes and reads) on this instance's connection to \(endpointName); it was not sent, nothing was changed"
            }
        return .unavailable(reason: reason)
    }

    private func milliseconds(_ duration: Duration) -> String { "\(SessionClock.milliseconds(of: duration)) ms" }

    func unexpected(_ reply: RedisReply, to command: String) -> SessionStoreError {
        if case .error(let message) = reply {
            return .unavailable(reason: "\(endpointName) refused \(command): \(message)")
        }
        return .unavailable(reason: "\(endpointName) answered \(command) with \(reply)")
    }
}

/// Lua that sets `now` to Redis's clock in milliseconds, for both scripts: the scores of the
/// session index, one clock for every instance on the prefix.
private let nowInMilliseconds = """
    local time = redis.call('TIME')
    local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    """
