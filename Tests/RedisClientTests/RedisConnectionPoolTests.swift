import Foundation
import HTTPTestSupport
import RedisClient
import RedisTestSupport
import Synchronization
import Testing

@Suite("RedisConnectionPool: one connection per thread")
struct RedisConnectionPoolTests {
    /// CLIENT ID of the calling thread's pooled connection.
    private func clientID(_ pool: RedisConnectionPool) throws -> Int {
        try pool.withConnection { connection throws(RedisError) in
            guard case .integer(let id) = try connection.command("CLIENT", "ID") else {
                throw .protocolViolation("CLIENT ID")
            }
            return id
        }
    }

    /// Runs `body` on a new thread and waits until that thread has exited.
    private func onNewThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) throws -> R {
        let result = Mutex<Result<R, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let outcome = Result { try body() }
            result.withLock { $0 = outcome }
            done.signal()
        }
        thread.start()
        done.wait()
        return try result.withLock { $0! }.get()
    }

    @Test func eachThreadHasItsOwnConnectionAndKeepsIt() throws {
        let server = try RedisServerProcess()
        let pool = RedisConnectionPool(endpoint: server.endpoint, options: RedisOptions())
        let here = try clientID(pool)
        #expect(try clientID(pool) == here)
        let threads = 4
        let ids = Mutex<[[Int]]>([])
        let ready = DispatchGroup()
        let allAlive = DispatchGroup()  // every thread lives until all have asked: none takes over an exited one's id
        for _ in 0 ..< threads { allAlive.enter() }
        for _ in 0 ..< threads {
            ready.enter()
            Thread {
                defer { ready.leave() }
                let pair = (try? [clientID(pool), clientID(pool)]) ?? []
                ids.withLock { $0.append(pair) }
                allAlive.leave()
                allAlive.wait()
            }.start()
        }
        ready.wait()
        let seen = ids.withLock { $0 }
        #expect(seen.count == threads)
        #expect(seen.allSatisfy { $0.count == 2 && $0[0] == $0[1] })  // the same thread, the same connection
        #expect(Set(seen.map { $0.first ?? -1 } + [here]).count == threads + 1)  // different threads, different ones
    }

    @Test func thePoolGoingAwayClosesTheConnectionsOfThreadsStillRunning() throws {
        let server = try RedisServerProcess()
        let used = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let id = Mutex<Int?>(nil)
        let handOver = Mutex<RedisConnectionPool?>(
            RedisConnectionPool(endpoint: server.endpoint, options: RedisOptions()))
        Thread {
            do {
                let pool = handOver.withLock { $0.take() }!  // the last reference, dropped at the end of this scope
                id.withLock { $0 = try? clientID(pool) }
            }
            used.signal()
            finish.wait()  // the thread outlives the pool
        }.start()
        used.wait()
        defer { finish.signal() }
        guard let id = id.withLock({ $0 }) else {
            Issue.record("the thread got no connection")
            return
        }
        #expect(
            eventually {
                guard case .bulk(let list) = server.command("CLIENT", "LIST") else { return false }
                return !String(decoding: list, as: UTF8.self).contains("id=\(id) ")
            })
    }

    @Test func onConnectRunsOnEachThreadsConnection() throws {
        let server = try RedisServerProcess()
        let pool = RedisConnectionPool(endpoint: server.endpoint, options: RedisOptions()) {
            connection throws(RedisError) in
            _ = try connection.command("INCR", "connects")
        }
        _ = try clientID(pool)
        _ = try onNewThread { try clientID(pool) }
        _ = try clientID(pool)
        #expect(server.command("GET", "connects") == .bulk(Array("2".utf8)))
    }
}
