import Foundation
import RedisClient
import RedisTestSupport
import Testing

@Suite("RedisServerProcess: the tests' own redis-server")
struct RedisServerProcessTests {
    @Test func anAppendOnlyServerKeepsAnsweredWritesThroughAKillAndRestart() throws {
        let server = try RedisServerProcess(appendOnly: true)
        #expect(server.command("SET", "kept", "yes") == .status("OK"))
        server.kill()
        #expect(server.command("PING").isClientSideError)
        try server.restart()
        #expect(server.command("GET", "kept") == .bulk(Array("yes".utf8)))
    }

    @Test func withoutAppendOnlyARestartStartsEmptyOnTheSamePort() throws {
        let server = try RedisServerProcess()
        #expect(server.command("SET", "gone", "soon") == .status("OK"))
        try server.restart()
        #expect(server.command("GET", "gone") == .null)
        #expect(try RedisEndpoint(parsing: server.url) == server.endpoint)
    }

    @Test func commandCallsCountsPerCommandFromCommandStats() throws {
        let server = try RedisServerProcess()
        for _ in 0 ..< 3 { server.command("GET", "x") }
        server.command("SET", "x", "1")
        let calls = server.commandCalls()
        #expect(calls["get"] == 3)
        #expect(calls["set"] == 1)
    }

    @Test func aPasswordIsRequiredAndTheURLCarriesIt() throws {
        let server = try RedisServerProcess(password: "letmein")
        #expect(server.url.hasPrefix("redis://:letmein@127.0.0.1:"))
        #expect(server.command("PING") == .status("PONG"))
        var anonymous = server.endpoint
        anonymous.password = nil
        guard
            case .error(let message) = try RedisConnection(endpoint: anonymous, options: RedisOptions()).command("PING")
        else {
            Issue.record("PING without a password was answered")
            return
        }
        #expect(message.hasPrefix("NOAUTH"))
    }

    @Test func stopRemovesTheDirectory() throws {
        let server = try RedisServerProcess(unixSocket: true)
        #expect(FileManager.default.fileExists(atPath: server.directory))
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: server.directory))
    }
}

extension RedisReply {
    fileprivate var isClientSideError: Bool {
        if case .error(let message) = self { return message.hasPrefix("RedisServerProcess:") }
        return false
    }
}
