import CHiredis

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one owner of a hiredis `redisContext`: connect (with the timeouts set), send argv commands,
/// read replies, free. Used by ``RedisConnection`` and ``RedisInvalidationListener``.
///
/// Invariant: `pointer` is a connected blocking context whose read and write timeouts are set;
/// once any call reports the context broken (`err` set, a NULL reply) the owner must call
/// ``free()`` and never use it again. Not thread-safe: one thread at a time.
/// Cost: a command copies its arguments once into one buffer and its reply once out of hiredis.
struct HiredisContext {
    let pointer: UnsafeMutablePointer<redisContext>

    /// Connects, sets the read/write timeout, sends AUTH when a password is given and SELECT when
    /// `selectDatabase` and the database is not 0. Throws `.connectFailed` with what hiredis or Redis said.
    static func open(_ endpoint: RedisEndpoint, _ options: RedisOptions, selectDatabase: Bool = true) throws(RedisError)
        -> HiredisContext
    {
        _ = sigpipeIgnored
        let milliseconds = options.timeoutMilliseconds
        let opened: UnsafeMutablePointer<redisContext>? =
            switch endpoint.address {
            case .tcp(let host, let port): chiredis_connect_tcp(host, Int32(port), milliseconds)
            case .unix(let path): chiredis_connect_unix(path, milliseconds)
            }
        guard let opened else { throw .connectFailed("hiredis could not allocate a context") }
        let context = HiredisContext(pointer: opened)
        guard opened.pointee.err == 0 else {
            let reason = context.errorText
            context.free()
            throw .connectFailed("\(endpoint): \(reason)")
        }
        guard chiredis_set_timeout(opened, milliseconds) == REDIS_OK else {
            let reason = context.errorText
            context.free()
            throw .connectFailed("\(endpoint): cannot set the timeout: \(reason)")
        }
        var handshake: [(what: String, arguments: [[UInt8]])] = []
        if let password = endpoint.password { handshake.append(("AUTH", [Array("AUTH".utf8), Array(password.utf8)])) }
        if selectDatabase, endpoint.database != 0 {
            handshake.append(
                ("SELECT \(endpoint.database)", [Array("SELECT".utf8), Array(String(endpoint.database).utf8)]))
        }
        for (what, arguments) in handshake {
            let reply: RedisReply
            do { reply = try context.command(arguments) } catch {
                context.free()
                throw .connectFailed("\(endpoint): \(what): \(error)")
            }
            guard case .status = reply else {
                context.free()
                throw .connectFailed("\(endpoint): \(what) answered \(reply)")
            }
        }
        return context
    }

    func free() { redisFree(pointer) }

    /// The socket, for `poll`.
    var descriptor: Int32 { pointer.pointee.fd }

    /// Whether the socket is readable while no reply is awaited: Redis closed it (or sent what it
    /// never sends unasked). One `poll` with no wait.
    var peerClosed: Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }

    /// What hiredis says went wrong last (`errstr`).
    var errorText: String {
        withUnsafeBytes(of: pointer.pointee.errstr) { bytes in
            let text = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            return text.isEmpty ? "error \(pointer.pointee.err)" : text
        }
    }

    /// Sends one command and reads its reply. A NULL reply throws `.connectionLost`: the caller frees the context.
    func command(_ arguments: [[UInt8]]) throws(RedisError) -> RedisReply {
        let raw = Self.withArgv(arguments) { count, argv, lengths in redisCommandArgv(pointer, count, argv, lengths) }
        return try take(raw)
    }

    /// Queues one command in the output buffer (sent by the next ``reply()``).
    func append(_ arguments: [[UInt8]]) throws(RedisError) {
        let status = Self.withArgv(arguments) { count, argv, lengths in
            redisAppendCommandArgv(pointer, count, argv, lengths)
        }
        guard status == REDIS_OK else { throw .connectionLost(errorText) }
    }

    /// Queues commands already in RESP form (one or more, back to back) in the output buffer, as
    /// they are: one copy (sent by the next ``reply()``).
    func appendEncoded(_ wire: [UInt8]) throws(RedisError) {
        let status = wire.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { redisAppendFormattedCommand(pointer, $0.baseAddress, $0.count) }
        }
        guard status == REDIS_OK else { throw .connectionLost(errorText) }
    }

    /// Flushes the output buffer if needed and reads the next reply (blocking, up to the read timeout).
    func reply() throws(RedisError) -> RedisReply {
        var raw: UnsafeMutableRawPointer? = nil
        guard redisGetReply(pointer, &raw) == REDIS_OK else { throw .connectionLost(errorText) }
        return try take(raw)
    }

    /// A reply already read and buffered, without touching the socket; nil when none is complete.
    func bufferedReply() throws(RedisError) -> RedisReply? {
        var raw: UnsafeMutableRawPointer? = nil
        guard redisGetReplyFromReader(pointer, &raw) == REDIS_OK else { throw .connectionLost(errorText) }
        guard raw != nil else { return nil }
        return try take(raw)
    }

    /// Reads what the socket has into the reader (blocking up to the read timeout). Throws on EOF or error.
    func readIntoBuffer() throws(RedisError) {
        guard redisBufferRead(pointer) == REDIS_OK else { throw .connectionLost(errorText) }
    }

    /// Writes the whole output buffer (blocking up to the write timeout per write).
    func flush() throws(RedisError) {
        var done: Int32 = 0
        while done == 0 {
            guard redisBufferWrite(pointer, &done) == REDIS_OK else { throw .connectionLost(errorText) }
        }
    }

    /// Converts and frees a reply; NULL means the context is broken.
    private func take(_ raw: UnsafeMutableRawPointer?) throws(RedisError) -> RedisReply {
        guard let raw else { throw .connectionLost(errorText) }
        defer { freeReplyObject(raw) }
        return try RedisReply(copying: raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Calls `body` with argc, argv and argvlen pointing into one contiguous copy of `arguments`.
    private static func withArgv<R>(
        _ arguments: [[UInt8]], _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R
    ) -> R {
        var joined: [UInt8] = []
        joined.reserveCapacity(arguments.reduce(1) { $0 + $1.count })
        var lengths: [Int] = []
        lengths.reserveCapacity(arguments.count)
        for argument in arguments {
            joined.append(contentsOf: argument)
            lengths.append(argument.count)
        }
        joined.append(0)  // so the base address is never nil, even with only empty arguments
        return joined.withUnsafeBufferPointer { bytes in
            let base = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
            var argv: [UnsafePointer<CChar>?] = []
            argv.reserveCapacity(arguments.count)
            var offset = 0
            for length in lengths {
                argv.append(base + offset)
                offset += length
            }
            return argv.withUnsafeMutableBufferPointer { argvBuffer in
                lengths.withUnsafeBufferPointer { lengthBuffer in
                    body(Int32(arguments.count), argvBuffer.baseAddress!, lengthBuffer.baseAddress!)
                }
            }
        }
    }
}

/// Sets `SIGPIPE` to ignored once per process (a global's initialiser runs once, thread-safely)
/// before the first connect: hiredis 0.14 sends with `write`, so writing to a connection Redis has
/// closed would otherwise kill the process instead of failing with EPIPE.
private let sigpipeIgnored: Bool = {
    _ = signal(SIGPIPE, SIG_IGN)
    return true
}()
