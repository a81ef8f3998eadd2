import Foundation
import HTTPTestSupport
import RedisClient
import RedisTestSupport
import Synchronization
import Testing

@Suite("RedisConnection against a real redis-server")
struct RedisConnectionTests {
    private let fast = RedisOptions(
        timeout: .milliseconds(300), initialBackoff: .milliseconds(200), maxBackoff: .milliseconds(400))

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aCommandAndItsReplyRoundTripBinaryBytes() throws {
        let server = try RedisServerProcess()
        let connection = RedisConnection(endpoint: server.endpoint, options: fast)
        let value: [UInt8] = [0x00, 0xFF, 0x0D, 0x0A, 0x24, 0x00]
        let key: [UInt8] = [0x6B, 0x00, 0xFF]
        #expect(try connection.command([bytes("SET"), key, value]) == .status("OK"))
        #expect(try connection.command([bytes("GET"), key]) == .bulk(value))
        #expect(try connection.command([bytes("STRLEN"), key]) == .integer(6))
        #expect(try connection.command("GET", "missing") == .null)
        #expect(try connection.command([bytes("SET"), bytes("empty"), []]) == .status("OK"))
        #expect(try connection.command("GET", "empty") == .bulk([]))
        guard case .error(let message) = try connection.command("INCR", "empty") else {
            Issue.record("INCR of '' did not fail")
            return
        }
        #expect(message.hasPrefix("ERR"))
    }

    @Test func nestedArraysComeBackNested() throws {
        let server = try RedisServerProcess()
        let connection = RedisConnection(endpoint: server.endpoint, options: fast)
        let reply = try connection.command("EVAL", "return {1, {'a', {2, false}}, 'b'}", "0")
        #expect(
            reply == .array([.integer(1), .array([.bulk(bytes("a")), .array([.integer(2), .null])]), .bulk(bytes("b"))])
        )
    }

    @Test func aPipelineAnswersInOrder() throws {
        let server = try RedisServerProcess()
        let connection = RedisConnection(endpoint: server.endpoint, options: fast)
        let commands =
            (0 ..< 50).map { [bytes("INCRBY"), bytes("counter"), bytes(String($0))] } + [
                [bytes("NOSUCHCOMMAND")], [bytes("GET"), bytes("counter")]
            ]
        let replies = try connection.pipeline(commands)
        #expect(replies.count == 52)
        #expect(Array(replies.prefix(50)) == (0 ..< 50).map { .integer($0 * ($0 + 1) / 2) })
        guard case .error = replies[50] else {
            Issue.record("an unknown command answered \(replies[50])")
            return
        }
        #expect(replies[51] == .bulk(bytes("1225")))
    }

    @Test func aPasswordIsSentWithAuthAndAWrongOneFailsTheConnect() throws {
        let server = try RedisServerProcess(password: "p@ss word")
        let good = RedisConnection(endpoint: server.endpoint, options: fast)
        #expect(try good.command("PING") == .status("PONG"))
        let parsed = try RedisEndpoint(parsing: server.url.replacingPassword("p%40ss%20word"))
        #expect(try RedisConnection(endpoint: parsed, options: fast).command("PING") == .status("PONG"))

        var wrong = server.endpoint
        wrong.password = "nope"
        #expect { try RedisConnection(endpoint: wrong, options: fast).command("PING") } throws: { error in
            guard case .connectFailed(let reason) = error as? RedisError else { return false }
            return reason.contains("AUTH") && !reason.contains("nope")
        }
        var none = server.endpoint
        none.password = nil
        #expect(try RedisConnection(endpoint: none, options: fast).command("GET", "k").isNoAuthError)
    }

    @Test func aDatabaseOtherThanZeroIsSelected() throws {
        let server = try RedisServerProcess()
        var endpoint = server.endpoint
        endpoint.database = 5
        let connection = RedisConnection(endpoint: endpoint, options: fast)
        #expect(try connection.command("SET", "where", "five") == .status("OK"))
        #expect(server.command("GET", "where") == .null)
        #expect(server.command("SELECT", "5") == .status("OK"))
        #expect(server.command("GET", "where") == .bulk(bytes("five")))
    }

    @Test func aUnixSocketWorks() throws {
        let server = try RedisServerProcess(unixSocket: true)
        guard case .unix(let path) = server.endpoint.address else {
            Issue.record("not a unix endpoint")
            return
        }
        let connection = RedisConnection(endpoint: try RedisEndpoint(parsing: server.url), options: fast)
        #expect(try connection.command("SET", "k", "v") == .status("OK"))
        #expect(try connection.command("GET", "k") == .bulk(bytes("v")))
        #expect(server.url == "redis+unix://\(path)")
    }

    @Test func onConnectRunsAfterEachConnectWithTheMarkReset() throws {
        let server = try RedisServerProcess()
        let connection = RedisConnection(endpoint: server.endpoint, options: fast) { connection throws(RedisError) in
            #expect(connection.mark == 0)
            _ = try connection.command("INCR", "connects")
            connection.mark = 7
        }
        #expect(try connection.command("GET", "connects") == .bulk(bytes("1")))
        #expect(connection.mark == 7 && connection.connectCount == 1)
        connection.disconnect()
        #expect(try connection.command("GET", "connects") == .bulk(bytes("2")))
        #expect(connection.connectCount == 2)
    }

    @Test func evaluateSurvivesScriptFlushAndARestart() throws {
        let server = try RedisServerProcess()
        let connection = RedisConnection(
            endpoint: server.endpoint,
            options: RedisOptions(initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(1)))
        let script = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        #expect(try connection.evaluate(script, keys: [bytes("n")], arguments: [bytes("2")]) == .integer(2))
        #expect(try connection.evaluate(script, keys: [bytes("n")], arguments: [bytes("3")]) == .integer(5))
        #expect(server.commandCalls()["script|load"] == 1)
        #expect(server.commandCalls()["evalsha"] == 2)

        #expect(server.command("SCRIPT", "FLUSH") == .status("OK"))
        #expect(try connection.evaluate(script, keys: [bytes("n")], arguments: [bytes("1")]) == .integer(6))
        let afterFlush = server.commandCalls()
        #expect(afterFlush["script|load"] == 2)  // NOSCRIPT, then loaded again
        #expect(afterFlush["evalsha"] == 4)  // the one answered NOSCRIPT and its retry

        try server.restart()  // no AOF: the counter starts over, and the script cache is empty
        #expect(throws: RedisError.self) {
            try connection.evaluate(script, keys: [bytes("n")], arguments: [bytes("1")])
        }
        #expect(
            eventually(within: .seconds(5)) {
                (try? connection.evaluate(script, keys: [bytes("n")], arguments: [bytes("4")])) == .integer(4)
            })
        let afterRestart = server.commandCalls()
        #expect(afterRestart["script|load"] == 1)
        #expect(afterRestart["evalsha"] == 2)
    }

    @Test func aPausedServerMakesACommandThrowThenBackOffThenRecoverByItself() throws {
        let server = try RedisServerProcess()
        let connection = RedisConnection(endpoint: server.endpoint, options: fast)
        #expect(try connection.command("SET", "k", "v") == .status("OK"))
        server.pause()
        let clock = ContinuousClock()
        let started = clock.now
        #expect { try connection.command("GET", "k") } throws: { error in
            guard case .connectionLost = error as? RedisError else { return false }
            return true
        }
        #expect(clock.now - started < .seconds(5))  // it returned (the bound is generous; no latency figure)
        #expect { try connection.command("GET", "k") } throws: { error in
            guard case .backingOff(let retryAfter) = error as? RedisError else { return false }
            return retryAfter > .zero && retryAfter <= fast.initialBackoff
        }
        #expect(!connection.isConnected)
        server.resume()
        #expect(eventually(within: .seconds(10)) { (try? connection.command("GET", "k")) == .bulk(bytes("v")) })
    }

    @Test func writingToAConnectionTheServerClosedThrowsInsteadOfRaisingSIGPIPE() throws {
        let server = try RedisServerProcess()
        let connection = RedisConnection(endpoint: server.endpoint, options: fast)
        guard case .integer(let id) = try connection.command("CLIENT", "ID") else {
            Issue.record("CLIENT ID")
            return
        }
        #expect(server.command("CLIENT", "KILL", "ID", String(id)) == .integer(1))
        let large = [UInt8](repeating: 0x61, count: 8 << 20)  // far more than a socket buffer: several writes after the reset
        #expect {
            try connection.pipeline([[bytes("SET"), bytes("a"), large], [bytes("SET"), bytes("b"), large]])
        } throws: { error in
            guard case .connectionLost = error as? RedisError else { return false }
            return true
        }
    }

    @Test func aRefusedConnectFailsAndBacksOff() throws {
        let server = try RedisServerProcess()
        let connection = RedisConnection(endpoint: server.endpoint, options: fast)
        server.stop()
        #expect { try connection.command("PING") } throws: { error in
            guard case .connectFailed(let reason) = error as? RedisError else { return false }
            return reason.contains("127.0.0.1")
        }
        #expect { try connection.command("PING") } throws: { error in
            guard case .backingOff = error as? RedisError else { return false }
            return true
        }
    }

    @Test func aConnectionRedisClosedWhileIdleIsReplacedBeforeTheNextCommand() throws {
        let server = try RedisServerProcess()
        var options = fast
        options.idleCheckAfter = .milliseconds(20)
        let connects = Mutex(0)
        let connection = RedisConnection(endpoint: server.endpoint, options: options) { _ throws(RedisError) in
            connects.withLock { $0 += 1 }
        }
        #expect(try connection.command("SET", "k", "1") == .status("OK"))
        #expect(server.command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") == .integer(1))
        Thread.sleep(forTimeInterval: 0.05)
        // Without the check, this command would be written to the closed socket and lost (EOF).
        #expect(try connection.command("INCR", "k") == .integer(2))
        #expect(connects.withLock { $0 } == 2)
        // In use (not idle that long), a connection is not checked: a command on one closed
        // meanwhile fails, and the connection backs off.
        options.idleCheckAfter = .seconds(3600)
        let busy = RedisConnection(endpoint: server.endpoint, options: options)
        #expect(try busy.command("PING") == .status("PONG"))
        #expect(server.command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") == .integer(2))
        #expect { try busy.command("INCR", "k") } throws: { error in
            guard case .connectionLost = error as? RedisError else { return false }
            return true
        }
        #expect(server.command("GET", "k") == .bulk(bytes("2")))
    }
}

extension RedisReply {
    fileprivate var isNoAuthError: Bool {
        if case .error(let message) = self { return message.hasPrefix("NOAUTH") }
        return false
    }
}

extension String {
    /// `redis://:OLD@…` with the password replaced by `password` (already percent-encoded).
    fileprivate func replacingPassword(_ password: String) -> String {
        guard let at = lastIndex(of: "@") else { return self }
        return "redis://:\(password)" + self[at...]
    }
}
