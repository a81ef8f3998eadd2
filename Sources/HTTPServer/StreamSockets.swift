// Streamed responses (`text/event-stream`) are not left to libmicrohttpd: once the request has
// arrived and the handler answered with a ``StreamedBody``, the server takes the connection's
// socket over (a duplicate of its descriptor), lets libmicrohttpd close and free its connection,
// and writes the response head and the body, chunked, from threads of its own (one per
// libmicrohttpd thread) that each wait on their stream sockets with epoll.
//
// Why: libmicrohttpd 0.9.75 keeps a connection's whole memory pool (`--connection-memory`, 32 KiB
// by default, 8 KiB at the least that still takes large headers) for as long as the response is
// sent, so an idle stream cost 11.5-24 KB; and waking a suspended connection costs a walk of
// every suspended connection of its thread (`resume_suspended_connections`). A taken-over stream
// is a socket, its pending bytes and a few dozen bytes here, and a write reaches its socket
// through one eventfd write and one `send`.
//
// Invariant: each stream socket is owned by exactly one `Stream` of one ``StreamLoop``, touched
// only by that loop's thread from the moment it takes the stream off `arriving`; it is closed
// exactly once, by that loop, which then ends its body (``StreamedBody/connectionEnded()``),
// gives back its count and runs its `ended` action. ``StreamSockets`` counts streams, in all and
// per peer address, from ``StreamSockets/reserve(for:)`` to that close (or to
// ``StreamSockets/release(_:)`` when the take-over failed).

import CEpoll
import CMicroHTTPD
import HTTPCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The sockets of streamed responses, spread over a few ``StreamLoop``s, and their counts (see
/// the file's comment).
final class StreamSockets: Sendable {
    private struct Counts {
        var all = 0
        var perAddress: [IPAddress: Int] = [:]
        var stopping = false
    }

    private let counts = Mutex(Counts())
    private let loops: [StreamLoop]
    private let nextLoop = Atomic<Int>(0)
    /// The most streams one peer address may hold (0: no limit).
    let limitPerAddress: Int

    /// Starts `loops` threads (at least one) that hold at most `limitPerAddress` streams of one
    /// peer address (0: no limit); nil when the system gives no epoll, eventfd or thread.
    init?(loops: Int, limitPerAddress: Int) {
        self.limitPerAddress = limitPerAddress
        var made: [StreamLoop] = []
        for _ in 0 ..< max(1, loops) {
            guard let loop = StreamLoop() else {
                for loop in made { loop.stop() }
                return nil
            }
            made.append(loop)
        }
        self.loops = made
    }

    /// Streams taken over and not yet closed.
    var count: Int { counts.withLock { $0.all } }

    /// Counts a stream for `address` ahead of its take-over; false (nothing counted) when that
    /// address has ``limitPerAddress`` streams already or the sockets are stopping.
    func reserve(for address: IPAddress?) -> Bool {
        counts.withLock { counts in
            guard !counts.stopping else { return false }
            if let address {
                let held = counts.perAddress[address, default: 0]
                guard limitPerAddress == 0 || held < limitPerAddress else { return false }
                counts.perAddress[address] = held + 1
            }
            counts.all += 1
            return true
        }
    }

    /// Gives back a reservation whose take-over did not happen, or whose stream was closed.
    func release(_ address: IPAddress?) {
        counts.withLock { counts in
            counts.all -= 1
            guard let address, let held = counts.perAddress[address] else { return }
            counts.perAddress[address] = held > 1 ? held - 1 : nil
        }
    }

    /// Takes over `socket` (the caller's own descriptor from now on) for a stream reserved with
    /// ``reserve(for:)``, on the next loop in turn: it sends `head`, then `body` as it is
    /// written (in chunks when `chunked`), and closes the socket when the body ends, is closed, or
    /// the client leaves. `ended` runs on the loop's thread once the socket is closed.
    func adopt(
        socket: Int32, head: [UInt8], body: StreamedBody, chunked: Bool, address: IPAddress?,
        ended: @escaping @Sendable () -> Void
    ) {
        let loop = loops[nextLoop.add(1, ordering: .relaxed).oldValue % loops.count]
        loop.adopt(socket: socket, head: head, body: body, chunked: chunked) { [self] in
            release(address)
            ended()
        }
    }

    /// Ends every stream by `deadline`: no new one is taken, what the bodies already hold is sent
    /// (the caller finishes them first), and at the deadline what is left is closed. Returns once
    /// every loop's thread has ended.
    func stop(by deadline: ContinuousClock.Instant) {
        counts.withLock { $0.stopping = true }
        while count > 0, ContinuousClock.now < deadline { usleep(2_000) }
        for loop in loops { loop.stop() }
    }
}

/// One epoll thread writing the stream sockets it was given (see the file's comment).
final class StreamLoop: Sendable {
    /// One stream: its socket, body and the bytes framed and not yet sent.
    ///
    /// Thread: made on a libmicrohttpd thread and handed over through `Shared.arriving`; from
    /// then on only the loop's thread touches it, so it needs no lock.
    private final class Stream: @unchecked Sendable {
        let token: UInt64
        let socket: Int32
        let body: StreamedBody
        let chunked: Bool
        let ended: @Sendable () -> Void
        /// The head, then framed body bytes, not yet sent past `sent`.
        var pending: [UInt8]
        var sent = 0
        /// The last bytes (the chunked body's end) are in `pending`: close once they are sent.
        var closeWhenSent = false

        init(
            token: UInt64, socket: Int32, head: [UInt8], body: StreamedBody, chunked: Bool,
            ended: @escaping @Sendable () -> Void
        ) {
            self.token = token
            self.socket = socket
            self.pending = head
            self.body = body
            self.chunked = chunked
            self.ended = ended
        }
    }

    private struct Shared {
        var nextToken: UInt64 = 1
        var arriving: [Stream] = []
        /// Streams whose body was written to (or ended) while the loop waited.
        var ready: [UInt64] = []
        /// The eventfd was written and the loop has not yet taken what it was written for.
        var signalled = false
        var exit = false
    }

    private let shared = Mutex(Shared())
    private let epoll: Int32
    private let wakeDescriptor: Int32
    private let thread = Mutex<pthread_t?>(nil)

    /// The token the eventfd is reported with; streams count from 1.
    private static let wakeToken: UInt64 = 0

    /// Starts the loop's thread; nil when the system gives no epoll, eventfd or thread.
    init?() {
        let epoll = cepoll_create()
        guard epoll >= 0 else { return nil }
        let wake = cepoll_eventfd()
        guard wake >= 0, cepoll_add(epoll, wake, UInt32(CEPOLL_IN), Self.wakeToken) == 0 else {
            close(epoll)
            if wake >= 0 { close(wake) }
            return nil
        }
        self.epoll = epoll
        self.wakeDescriptor = wake
        let retained = Unmanaged.passRetained(self)
        var handle = pthread_t()
        let started = pthread_create(
            &handle, nil,
            { argument in
                let loop = Unmanaged<StreamLoop>.fromOpaque(argument!).takeRetainedValue()
                loop.run()
                return nil
            }, retained.toOpaque())
        guard started == 0 else {
            retained.release()
            close(epoll)
            close(wake)
            return nil
        }
        thread.withLock { $0 = handle }
    }

    /// Takes over `socket` (see ``StreamSockets/adopt(socket:head:body:chunked:address:ended:)``).
    func adopt(socket: Int32, head: [UInt8], body: StreamedBody, chunked: Bool, ended: @escaping @Sendable () -> Void) {
        let taken = shared.withLock { shared -> Bool? in
            guard !shared.exit else { return nil }  // the thread has ended or is ending
            let token = shared.nextToken
            shared.nextToken += 1
            let stream = Stream(token: token, socket: socket, head: head, body: body, chunked: chunked, ended: ended)
            body.setWake { [self] in wake(token) }
            shared.arriving.append(stream)
            return Self.signal(&shared)
        }
        guard let signal = taken else {
            close(socket)
            body.connectionEnded()
            return ended()
        }
        if signal { writeWake() }
    }

    /// Closes every stream left and ends the thread; returns once it has ended.
    func stop() {
        if shared.withLock({ shared in
            shared.exit = true
            return Self.signal(&shared)
        }) {
            writeWake()
        }
        if let handle = thread.withLock({ handle in
            defer { handle = nil }
            return handle
        }) {
            pthread_join(handle, nil)
            close(epoll)
            close(wakeDescriptor)
        }
    }

    // MARK: The loop

    /// A body was written to or ended: its stream goes on the ready list.
    private func wake(_ token: UInt64) {
        if shared.withLock({ shared in
            shared.ready.append(token)
            return Self.signal(&shared)
        }) {
            writeWake()
        }
    }

    /// Marks the loop signalled; true when the caller must write the eventfd (it was not yet).
    private static func signal(_ shared: inout Shared) -> Bool {
        guard !shared.signalled else { return false }
        shared.signalled = true
        return true
    }

    private func writeWake() {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    /// The loop's thread: waits for the eventfd and the stream sockets, moves bytes from bodies
    /// to sockets, closes what ended.
    private func run() {
        var streams: [UInt64: Stream] = [:]
        var events = [cepoll_ready](repeating: cepoll_ready(), count: 256)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16_384, alignment: 16)
        defer { scratch.deallocate() }
        while true {
            let count = events.withUnsafeMutableBufferPointer { cepoll_wait(epoll, $0.baseAddress, 256, -1) }
            if count < 0 {
                if errno == EINTR { continue }
                break  // cannot happen with a valid epoll descriptor and buffer
            }
            var woken = false
            for event in events[0 ..< Int(count)] {
                if event.token == Self.wakeToken {
                    woken = true
                    continue
                }
                guard let stream = streams[event.token] else { continue }
                // Each flag on its own: an edge-triggered `CEPOLL_OUT` reported beside bytes read
                // is not reported again, and a stream waiting for room would wait for its next write.
                if event.events & UInt32(CEPOLL_IN) != 0, !drainInput(stream, scratch) {
                    end(stream, &streams)  // the client closed its side
                    continue
                }
                if event.events & UInt32(CEPOLL_ERR | CEPOLL_HUP | CEPOLL_RDHUP) != 0 {
                    end(stream, &streams)  // the client left, or half-closed (a stream's client only reads)
                    continue
                }
                if event.events & UInt32(CEPOLL_OUT) != 0 { pump(stream, scratch, &streams) }
            }
            guard woken else { continue }
            var counter: UInt64 = 0
            _ = read(wakeDescriptor, &counter, 8)
            let (arriving, ready, exit) = shared.withLock { shared in
                shared.signalled = false
                defer {
                    shared.arriving = []
                    shared.ready.removeAll(keepingCapacity: shared.ready.capacity <= 1_024)
                }
                return (shared.arriving, shared.ready, shared.exit)
            }
            for stream in arriving {
                streams[stream.token] = stream
                let events = UInt32(CEPOLL_IN | CEPOLL_OUT | CEPOLL_RDHUP) | UInt32(truncatingIfNeeded: CEPOLL_ET)
                guard cepoll_add(epoll, stream.socket, events, stream.token) == 0 else {
                    end(stream, &streams)
                    continue
                }
                pump(stream, scratch, &streams)
            }
            for token in ready {
                if let stream = streams[token] { pump(stream, scratch, &streams) }
            }
            if exit {
                for stream in Array(streams.values) { end(stream, &streams) }
                return
            }
        }
    }

    /// Reads and drops what the client sent (a stream's client has nothing more to say); false
    /// when it closed its side or the socket failed.
    private func drainInput(_ stream: Stream, _ scratch: UnsafeMutableRawBufferPointer) -> Bool {
        while true {
            let received = recv(stream.socket, scratch.baseAddress, scratch.count, Int32(MSG_DONTWAIT))
            if received > 0 { continue }
            if received < 0, errno == EINTR { continue }
            return received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
        }
    }

    /// Sends what is pending, then frames and sends what the body holds, until the socket is
    /// full (the next `CEPOLL_OUT` goes on), the body is parked (its next write wakes it), or the
    /// stream ends.
    private func pump(_ stream: Stream, _ scratch: UnsafeMutableRawBufferPointer, _ streams: inout [UInt64: Stream]) {
        while true {
            if stream.sent < stream.pending.count {
                let sent = stream.pending.withUnsafeBytes { pending in
                    send(
                        stream.socket, pending.baseAddress! + stream.sent, pending.count - stream.sent,
                        Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                if sent > 0 {
                    stream.sent += sent
                    continue
                }
                if sent < 0, errno == EINTR { continue }
                if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK { return }
                return end(stream, &streams)
            }
            stream.pending.removeAll(keepingCapacity: stream.pending.capacity <= 1_024)
            stream.sent = 0
            if stream.closeWhenSent { return end(stream, &streams) }
            switch stream.body.read(into: scratch, park: {}) {
            case .bytes(let count):
                if stream.chunked { stream.pending.append(contentsOf: "\(String(count, radix: 16))\r\n".utf8) }
                stream.pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0 ..< count]))
                if stream.chunked { stream.pending.append(contentsOf: [13, 10]) }
            case .parked:
                stream.pending = []  // an idle stream holds no buffer (the head's was about 250 bytes)
                return
            case .end:
                if stream.chunked { stream.pending.append(contentsOf: Array("0\r\n\r\n".utf8)) }
                stream.closeWhenSent = true
            case .abort:
                return end(stream, &streams)
            }
        }
    }

    /// Closes the stream's socket (which takes it out of the epoll set), ends its body and runs
    /// its `ended` action (which gives back its count).
    private func end(_ stream: Stream, _ streams: inout [UInt64: Stream]) {
        guard streams.removeValue(forKey: stream.token) != nil else { return }
        close(stream.socket)
        stream.body.connectionEnded()
        stream.ended()
    }
}
