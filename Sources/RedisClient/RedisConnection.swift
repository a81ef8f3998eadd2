/// One connection to Redis over hiredis, used by one thread at a time.
///
/// It connects lazily on first use (TCP or unix socket, then AUTH when the endpoint has a password,
/// SELECT when its database is not 0, then the owner's `onConnect`), with the read/write timeout
/// set after every connect, so no call blocks for much longer than ``RedisOptions/timeout`` per
/// round trip. A failed connect or a lost reply (hiredis's NULL reply: an I/O error or a timeout)
/// frees the context and starts a backoff: no attempt for ``RedisOptions/initialBackoff``,
/// doubling per further failure up to ``RedisOptions/maxBackoff``, reset by a successful connect.
/// A call during the backoff throws ``RedisError/backingOff(retryAfter:)`` at once, never blocking.
/// A connection unused for ``RedisOptions/idleCheckAfter`` is checked before it is used (one
/// `poll` of its socket): one Redis has closed meanwhile is replaced then, without a backoff.
/// Commands are never retried on another connection by this type: a lost command may or may not
/// have run.
///
/// Invariant: `context` is nil or a live, fully set-up context; `mark` is 0 after every (re)connect
/// until the owner sets it. Not thread-safe (neither is a hiredis context): give each thread its
/// own, for example through ``RedisConnectionPool``. Cost: one round trip per command, one write
/// and n replies per pipeline; arguments and replies are copied once.
package final class RedisConnection {
    package let endpoint: RedisEndpoint
    package let options: RedisOptions
    private let onConnect: ((RedisConnection) throws(RedisError) -> Void)?
    private var context: HiredisContext?
    /// True while the connect sequence runs (so `onConnect`'s own commands use the new context).
    private var connecting = false
    /// The current backoff step and when the next attempt may be made; nil after a success.
    private var backoff: (step: Duration, retryAt: ContinuousClock.Instant)?
    /// SCRIPT LOAD's answer per script; kept across reconnects (EVALSHA's NOSCRIPT reloads).
    private var scriptHashes: [RedisScript: [UInt8]] = [:]
    /// When the context was last handed to a command.
    private var lastUse = ContinuousClock.now

    /// Free for the owner (for example which tracking subscription this connection joined); set to
    /// 0 on every (re)connect, before `onConnect` runs.
    package var mark = 0
    /// Contexts opened so far, the current one included (counted before `onConnect` runs): more
    /// than 1 in `onConnect` means this connect replaces an earlier context.
    package private(set) var connectCount = 0

    /// `onConnect` runs after each successful connect (after AUTH and SELECT), on the calling
    /// thread, and may send commands on the connection; if it throws, the connect counts as failed.
    package init(
        endpoint: RedisEndpoint, options: RedisOptions, onConnect: ((RedisConnection) throws(RedisError) -> Void)? = nil
    ) {
        self.endpoint = endpoint
        self.options = options
        self.onConnect = onConnect
    }

    deinit { context?.free() }

    /// Whether a context is open now (no I/O).
    package var isConnected: Bool { context != nil }

    /// Sends one command (binary-safe arguments, the command name first) and returns its reply; an
    /// error reply is returned as `.error`, not thrown.
    package func command(_ arguments: [[UInt8]]) throws(RedisError) -> RedisReply {
        guard !arguments.isEmpty else { throw .protocolViolation("a command needs at least its name") }
        let live = try connected()
        do { return try live.command(arguments) } catch { throw lose(error) }
    }

    /// Sends one command of text arguments.
    package func command(_ arguments: String...) throws(RedisError) -> RedisReply {
        try command(arguments.map { Array($0.utf8) })
    }

    /// Sends all `commands` in one write and reads their replies, in order.
    package func pipeline(_ commands: [[[UInt8]]]) throws(RedisError) -> [RedisReply] {
        guard !commands.contains(where: { $0.isEmpty }) else {
            throw .protocolViolation("a command needs at least its name")
        }
        var wire: [UInt8] = []
        for command in commands { wire.append(contentsOf: RedisWire.command(command)) }
        return try pipeline(encoded: wire, count: commands.count)
    }

    /// Sends `count` commands already in RESP form (``RedisWire``), back to back in `wire`, in one
    /// write and reads their replies, in order.
    func pipeline(encoded wire: [UInt8], count: Int) throws(RedisError) -> [RedisReply] {
        guard count > 0 else { return [] }
        let live = try connected()
        do {
            try live.appendEncoded(wire)
            var replies: [RedisReply] = []
            replies.reserveCapacity(count)
            for _ in 0 ..< count { replies.append(try live.reply()) }
            return replies
        } catch {
            throw lose(error)
        }
    }

    /// Runs `script` with EVALSHA (its SHA1 from SCRIPT LOAD, cached here); on NOSCRIPT (Redis
    /// restarted or SCRIPT FLUSH) loads it again and retries once.
    package func evaluate(_ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]]) throws(RedisError) -> RedisReply
    {
        func run(_ hash: [UInt8]) throws(RedisError) -> RedisReply {
            try command(Self.evalsha(hash, keys: keys, arguments: arguments))
        }
        if let hash = scriptHashes[script] {
            let reply = try run(hash)
            guard case .error(let message) = reply, message.hasPrefix("NOSCRIPT") else { return reply }
        }
        return try run(try load(script))
    }

    /// `script`'s SHA1 on this connection (loaded first, one round trip, when it has none yet),
    /// for a caller that sends its `EVALSHA` itself, in a pipeline.
    package func scriptHash(_ script: RedisScript) throws(RedisError) -> [UInt8] {
        if let known = scriptHashes[script] { return known }
        return try load(script)
    }

    /// `EVALSHA hash numkeys key... arg...`.
    private static func evalsha(_ hash: [UInt8], keys: [[UInt8]], arguments: [[UInt8]]) -> [[UInt8]] {
        [Array("EVALSHA".utf8), hash, Array(String(keys.count).utf8)] + keys + arguments
    }

    /// SCRIPT LOAD, remembering the SHA1.
    private func load(_ script: RedisScript) throws(RedisError) -> [UInt8] {
        let reply = try command([Array("SCRIPT".utf8), Array("LOAD".utf8), Array(script.source.utf8)])
        guard case .bulk(let hash) = reply else { throw .protocolViolation("SCRIPT LOAD answered \(reply)") }
        scriptHashes[script] = hash
        return hash
    }

    /// Closes the context (no backoff: the next call connects at once).
    package func disconnect() {
        context?.free()
        context = nil
    }

    /// The live context, connecting first when there is none and no backoff is pending.
    private func connected() throws(RedisError) -> HiredisContext {
        let clock = ContinuousClock()
        if let context {
            let now = clock.now
            defer { lastUse = now }
            guard now - lastUse >= options.idleCheckAfter, context.peerClosed else { return context }
            disconnect()  // closed by Redis while idle: nothing was sent on it, so connect again now
        }
        if let backoff, clock.now < backoff.retryAt { throw .backingOff(retryAfter: backoff.retryAt - clock.now) }
        connecting = true
        defer { connecting = false }
        do throws(RedisError) {
            context = try HiredisContext.open(endpoint, options)
            connectCount += 1
            mark = 0
            try onConnect?(self)
            guard let context else { throw .connectFailed("\(endpoint): the connection was lost during onConnect") }
            backoff = nil
            lastUse = clock.now
            return context
        } catch {
            disconnect()
            startBackoff()
            throw error
        }
    }

    /// Frees the broken context and starts the backoff (the connect sequence does that itself).
    private func lose(_ error: RedisError) -> RedisError {
        disconnect()
        if !connecting { startBackoff() }
        return error
    }

    private func startBackoff() {
        let step = backoff.map { min($0.step * 2, options.maxBackoff) } ?? options.initialBackoff
        backoff = (step, ContinuousClock.now.advanced(by: step))
    }
}
