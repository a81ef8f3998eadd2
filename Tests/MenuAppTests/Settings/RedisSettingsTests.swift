// The Redis store's settings (issue 16): `--store`, `--redis-prefix`, `--redis-timeout`,
// `--redis-cache` from flags and environment, what each refuses (a bad URL with the client's own
// message and no password in it), `--data-dir` excluded, the help listing them; and the built server on a Redis store: its start-up
// line without the password, sessions under the prefix, readiness 503 while Redis is unreachable.

import ChildProcess
import Dispatch
import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import MenuSessionsRedis
import MenuTestSupport
import RedisClient
import RedisTestSupport
import Testing

extension AppTests {
    @Suite("Redis: the store's settings")
    struct RedisSettingsTests {
        private func settings(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ServerSettings {
            guard case .run(let settings) = try ServerSettings.parse(arguments: arguments, environment: environment)
            else {
                throw SettingsError.unknownFlag("not a run command")
            }
            return settings
        }

        private func refusal(_ arguments: [String], _ environment: [String: String] = [:]) -> String? {
            do {
                _ = try ServerSettings.parse(arguments: arguments, environment: environment)
                return nil
            } catch {
                return error.description
            }
        }

        @Test func theDefaultsAreMemoryWithRedisDefaultsReadyForAStore() throws {
            let defaults = try settings([])
            #expect(defaults.store == .memory && defaults.redisEndpoint == nil)
            #expect(defaults.redisPrefix == "menu:" && defaults.redisTimeoutMilliseconds == 500 && defaults.redisCache)
            #expect(defaults.redisTimeout == RedisOptions().timeout, "one source for the default")
            #expect(
                defaults.redisStoreOptions.cacheMaxAge == RedisStoreOptions().cacheMaxAge, "one source for the default")
        }

        @Test func flagsAndVariablesNameARedisStoreAndItsOptions() throws {
            let flags = try settings([
                "--store", "redis://:s3cret@10.0.0.5:6380/2", "--redis-prefix=shop1:menu:", "--redis-timeout", "300",
                "--redis-cache", "off", "--session-ttl", "600", "--redis-cache-max-age", "30"
            ])
            #expect(flags.store == .redis(try RedisEndpoint(parsing: "redis://:s3cret@10.0.0.5:6380/2")))
            #expect(flags.redisEndpoint?.password == "s3cret" && flags.redisEndpoint?.database == 2)
            #expect(flags.redisPrefix == "shop1:menu:" && flags.redisTimeoutMilliseconds == 300 && !flags.redisCache)
            #expect(flags.redisTimeout == .milliseconds(300) && flags.sessionTTLSeconds == 600)
            #expect(flags.redisStoreOptions.cacheMaxAge == .seconds(30))
            let environment = try settings(
                [],
                [
                    "MENU_STORE": "redis+unix:///run/redis/redis.sock?db=1", "MENU_REDIS_PREFIX": "m:",
                    "MENU_REDIS_TIMEOUT": "60000", "MENU_REDIS_CACHE": "on", "MENU_REDIS_CACHE_MAX_AGE": "1"
                ])
            #expect(
                environment.redisEndpoint?.address == .unix(path: "/run/redis/redis.sock")
                    && environment.redisEndpoint?.database == 1)
            #expect(
                environment.redisPrefix == "m:" && environment.redisTimeoutMilliseconds == 60_000
                    && environment.redisCache)
            #expect(environment.redisStoreOptions.cacheMaxAge == .seconds(1))
            // The flag wins over the variable, `memory` included.
            #expect(try settings(["--store", "memory"], ["MENU_STORE": "redis://127.0.0.1:6379"]).store == .memory)
        }

        @Test(arguments: ["redis://127.0.0.1:notaport", "http://127.0.0.1:6379", "redis://", "redis+unix://", "durable"]
        )
        func aBadStoreIsRefusedWithTheRedisURLProblem(_ url: String) throws {
            let problem = try #require(refusal(["--store", url]))
            let expected: String
            do {
                _ = try RedisEndpoint(parsing: url)
                Issue.record("\(url) parsed")
                return
            } catch {
                expected = error.description
            }
            #expect(problem == "--store: \(expected)")
            #expect(refusal([], ["MENU_STORE": url]) == "MENU_STORE: \(expected)")
        }

        @Test func aRefusedURLNeverShowsItsPassword() throws {
            let problem = try #require(refusal(["--store", "redis://:hunter2@127.0.0.1:99999"]))
            #expect(!problem.contains("hunter2") && problem.contains("***"), "\(problem)")
            #expect(
                try #require(refusal([], ["MENU_STORE": "redis://:hunter2@localhost:x/0"])).contains("hunter2") == false
            )
        }

        @Test(arguments: [
            ("--redis-prefix", ""), ("--redis-prefix", "a b"), ("--redis-prefix", "menu:\t"),
            ("--redis-prefix", "x\u{1}"),
            ("--redis-timeout", "0"), ("--redis-timeout", "60001"), ("--redis-timeout", "1.5"),
            ("--redis-cache", "yes"),
            ("--redis-cache-max-age", "0"), ("--redis-cache-max-age", "86401"), ("--redis-cache-max-age", "1s")
        ])
        func aBadRedisOptionIsRefusedNamingIt(_ flag: String, _ value: String) throws {
            let problem = try #require(refusal([flag, value]))
            #expect(problem.contains(flag), "\(problem)")
        }

        @Test func aDataDirectoryAndARedisStoreExcludeEachOtherWhereverEachComesFrom() throws {
            let expected =
                "--data-dir (MENU_DATA_DIR) and a Redis --store (MENU_STORE) cannot be used together: "
                + "sessions are kept either on this disk or in Redis; drop one of them"
            #expect(refusal(["--data-dir", "/var/lib/menu", "--store", "redis://127.0.0.1:6379"]) == expected)
            #expect(refusal(["--data-dir", "/var/lib/menu"], ["MENU_STORE": "redis://127.0.0.1:6379"]) == expected)
            #expect(refusal(["--store", "redis://127.0.0.1:6379"], ["MENU_DATA_DIR": "/d"]) == expected)
            #expect(try settings(["--data-dir", "/d", "--store", "memory"]).dataDirectory == "/d")
        }

        @Test func theHelpListsEveryRedisOptionWithItsVariableAndDefault() {
            let usage = ServerSettings.usage
            for (flag, variable, shown) in [
                ("--store STORE", "MENU_STORE", "(default memory)"),
                ("--redis-prefix PREFIX", "MENU_REDIS_PREFIX", "(default menu:)"),
                ("--redis-timeout N", "MENU_REDIS_TIMEOUT", "(default 500)"),
                ("--redis-cache on|off", "MENU_REDIS_CACHE", "(default on)"),
                ("--redis-cache-max-age N", "MENU_REDIS_CACHE_MAX_AGE", "(default 10)")
            ] {
                let line = usage.split(separator: "\n").first { $0.hasPrefix("  \(flag) ") }
                #expect(
                    line?.contains("[\(variable)]") == true && line?.contains(shown) == true,
                    "\(flag): \(line ?? "missing")")
            }
        }
    }
}

extension AppTests {
    @Suite(
        "Redis: menu-server started on a Redis store",
        .enabled(if: FileManager.default.isExecutableFile(atPath: RedisServerProcess.executable)))
    struct RedisStartupTests {
        /// Two menu-server processes on `redis`, serving `config`, each with `arguments` added.
        private static func twoServers(
            on redis: RedisServerProcess, config: String = LivePaths.menuConfig, _ arguments: [String] = []
        ) throws -> [LiveChildServer] {
            try (0 ..< 2).map { _ in
                try LiveChildServer(arguments: ["--port", "0", "--config", config, "--store", redis.url] + arguments)
            }
        }

        @Test
        func theStartUpLineNamesTheStoreWithoutItsPasswordAndSessionsLiveInRedis() throws {
            let redis = try RedisServerProcess(password: "hunter2")
            defer { redis.stop() }
            let child = try LiveChildServer(arguments: [
                "--port", "0", "--config", LivePaths.menuConfig, "--store", redis.url,
                "--redis-prefix", "shop1:", "--redis-timeout", "300", "--redis-cache", "off"
            ])
            defer { child.stop() }
            #expect(eventually { child.stderrText.value.contains("sessions are kept in Redis") })
            let log = child.stderrText.value
            #expect(
                log.contains("sessions are kept in Redis at redis://:***@127.0.0.1:")
                    && log.contains("key prefix shop1:")
                    && log.contains("timeout 300 ms") && log.contains("client-side cache off"), "\(log)")
            #expect(!log.contains("hunter2"))
            let connection = try LiveRawConnection(port: child.port)
            #expect(try connection.request("GET", "/readyz").text == #"{"status":"ready"}"#)
            let session = try connection.newSession()
            #expect(
                redis.command("EXISTS", "shop1:s:\(session)") == .integer(1), "the session is a key under the prefix")
            #expect(child.signalAndWait(), "SIGTERM stops the store and exits")
            #expect(child.termination == .exited(0))
        }

        @Test
        func withItsRedisUnreachableTheServerStartsLiveButNotReady() throws {
            let port = try freeLoopbackPort()
            let child = try LiveChildServer(arguments: [
                "--port", "0", "--config", LivePaths.menuConfig, "--store", "redis://127.0.0.1:\(port)",
                "--redis-timeout", "300"
            ])
            defer { child.stop() }
            let connection = try LiveRawConnection(port: child.port)
            let ready = try connection.request("GET", "/readyz")
            #expect(
                ready.status == 503 && ready.header("Retry-After") == "1" && ready.text.contains("127.0.0.1:\(port)"),
                "\(ready)")
            #expect(try connection.request("GET", "/healthz").status == 200)
            #expect(try connection.request("POST", "/sessions").status == 503)
            #expect(try connection.request("GET", "/rows?limit=1").status == 200, "the default view needs no store")
        }

        @Test
        func twoServersOnOneRedisHoldMaxSessionsBetweenThemAndTheirMetricsCountThem() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let servers = try Self.twoServers(on: redis, ["--max-sessions", "3"])
            defer { for server in servers { server.stop() } }
            let connections = try servers.map { try LiveRawConnection(port: $0.port) }
            for index in 0 ..< 3 { #expect(try connections[index % 2].request("POST", "/sessions").status == 201) }
            for connection in connections {
                let refused = try connection.request("POST", "/sessions")
                #expect(refused.status == 429, "\(refused)")
                #expect(try refused.json()["error"]?["code"]?.stringValue == "too_many_sessions")
                #expect(refused.header("Retry-After").flatMap(Int.init).map { (3590 ... 3600).contains($0) } == true)
                let metrics = try connection.request("GET", "/metrics").text
                #expect(metrics.contains("\nmenu_sessions_live 3\n"), "\(metrics)")
                #expect(metrics.contains("\nmenu_sessions_created_total 3\n"))
            }
        }

        @Test
        func aLongPollOnOneServerIsAnsweredByAWriteOnTheOtherAndCarriesIt() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let servers = try Self.twoServers(on: redis)
            defer { for server in servers { server.stop() } }
            let (writer, watcher) = (
                try LiveRawConnection(port: servers[0].port), try LiveRawConnection(port: servers[1].port)
            )
            let session = try writer.request("POST", "/sessions").decode(LiveSessionBody.self).sessionId
            let answered = LiveLocked<LiveResponse?>(nil)
            let port = servers[1].port
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let response = try? LiveRawConnection(port: port, receiveTimeoutSeconds: 90).request(
                    "GET", "/changes?since=0&wait=60", headers: [("X-Session-Id", session)])
                answered.set(response)
                done.signal()
            }
            #expect(
                eventually {
                    (try? watcher.request("GET", "/metrics").text.contains("\nmenu_streams_open 1\n")) == true
                }, "the long poll waits on the second server")
            #expect(
                try writer.request("POST", "/groups/drinks/toggle", headers: [("X-Session-Id", session)]).status == 200)
            #expect(done.wait(timeout: .now() + .seconds(50)) == .success, "the write on the first server answered it")
            let response = try #require(answered.value)
            #expect(response.status == 200)
            let feed = try response.decode(LiveChanges.self)
            #expect(feed.revision == 1 && feed.changes.map(\.revision) == [1])
        }

        @Test
        func anEventStreamOnOneServerCarriesWritesOnTheOtherAndEndsWhenTheOtherDeletesTheSession() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let servers = try Self.twoServers(on: redis)
            defer { for server in servers { server.stop() } }
            let writer = try LiveRawConnection(port: servers[0].port)
            let session = try writer.request("POST", "/sessions").decode(LiveSessionBody.self).sessionId
            let stream = try LiveEventStream(
                port: servers[1].port, "/changes?since=0", headers: [("X-Session-Id", session)],
                receiveTimeoutSeconds: 60)
            #expect(try stream.nextEvent()?.event == "open")
            for (index, group) in ["drinks", "breakfast"].enumerated() {
                #expect(
                    try writer.request("POST", "/groups/\(group)/toggle", headers: [("X-Session-Id", session)]).status
                        == 200)
                let event = try #require(try stream.nextEvent())
                #expect(event.event == "change" && event.id == "\(index + 1)", "\(event)")
            }
            #expect(try writer.request("DELETE", "/session", headers: [("X-Session-Id", session)]).status == 204)
            let end = try #require(try stream.nextEvent())
            #expect(try end.event == "end" && end.json()["reason"]?.stringValue == "session_ended", "\(end)")
            #expect(try stream.next() == nil)
        }

        @Test
        func anEventStreamWhoseRedisStopsAnsweringEndsWithARetryHintNeverSilently() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let server = try LiveChildServer(arguments: [
                "--port", "0", "--config", LivePaths.menuConfig, "--store", redis.url, "--redis-timeout", "300",
                "--stream-heartbeat", "1"
            ])
            defer { server.stop() }
            let connection = try LiveRawConnection(port: server.port)
            let session = try connection.request("POST", "/sessions").decode(LiveSessionBody.self).sessionId
            let stream = try LiveEventStream(
                port: server.port, "/changes?since=0", headers: [("X-Session-Id", session)], receiveTimeoutSeconds: 60)
            #expect(try stream.nextEvent()?.event == "open")
            redis.kill()
            // The next heartbeat's look finds Redis gone: the stream says so and ends.
            let end = try #require(try stream.nextEvent())
            #expect(end.event == "end", "\(end)")
            #expect(try end.json()["reason"]?.stringValue == "store_unavailable" && end.json()["retry"] == .bool(true))
            #expect(try stream.next() == nil)
        }

        @Test
        func twoServersOnOneRedisHoldTheSessionMemoryBetweenThemThenAnswer429WithTheWait() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let path = try writeWideMenuFile(groups: 2_000)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let servers = try Self.twoServers(
                on: redis, config: path, ["--session-memory", "1M", "--max-changed-groups", "2000"])
            defer { for server in servers { server.stop() } }
            let connections = try servers.map { try LiveRawConnection(port: $0.port) }
            // Each session lists 300 groups: about 2.5 KB in Redis, so 1 MiB holds a few hundred.
            let body = Array((#"{"expanded":["# + (0 ..< 300).map { "\"g\($0)\"" }.joined(separator: ",") + "]}").utf8)
            var created = 0
            var refused: LiveResponse?
            let started = ContinuousClock.now
            while refused == nil, created < 2_000 {
                let answer = try connections[created % 2].request("POST", "/sessions", body: body)
                if answer.status == 201 { created += 1 } else { refused = answer }
            }
            let refusal = try #require(refused)
            #expect(refusal.status == 429, "\(refusal)")
            #expect(try refusal.json()["error"]?["code"]?.stringValue == "session_memory_full")
            // The wait is until the oldest session has been idle for the default hour, so it is short of
            // 3600 by however long the sessions took to create (seconds, under the address sanitizer).
            let creating = Int((ContinuousClock.now - started).components.seconds) + 2
            let wait = try #require(refusal.header("Retry-After").flatMap(Int.init))
            #expect((3600 - creating ... 3600).contains(wait), "Retry-After \(wait) after \(creating) s of creating")
            #expect(created > 100)
            for connection in connections {
                let metrics = try connection.request("GET", "/metrics").text
                let line = metrics.split(separator: "\n").first { $0.hasPrefix("menu_session_store_bytes ") }
                let bytes = try #require(line.flatMap { Int($0.split(separator: " ")[1]) }, "\(metrics)")
                #expect(bytes <= 1 << 20 && bytes > (1 << 20) - 4_000)
                #expect(metrics.contains("\nmenu_sessions_live \(created)\n"))
            }
        }
    }
}
