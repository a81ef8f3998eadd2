// The live multi-instance setup of the ScaleOut*Tests (issue 16): a real redis-server, several
// real menu-server processes (the built executable) with `--store` naming it, and a real nginx
// round-robin in front of them. Each instance serves a config file of its own (a copy of the
// tests' Sichuan menu) so that one instance can be given another menu and SIGHUP.

import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuService
import MenuTestSupport
import NginxTestSupport
import RedisTestSupport
import Testing

/// Redis, `instances` menu-server processes on it and nginx in front; stop with ``stop()``.
final class ScaleOutCluster {
    let redis: RedisServerProcess
    let fixture: ReloadFixture
    let configs: [String]
    let instances: [LiveChildServer]
    let nginx: NginxProcess

    /// Starts it all: `redisTimeout` milliseconds for every Redis call (`--redis-timeout`),
    /// Redis with an append-only file when `appendOnly`, `flags` added to each instance.
    init(instances count: Int = 2, redisTimeout: Int = 300, appendOnly: Bool = false, flags: [String] = []) throws {
        let redis = try RedisServerProcess(appendOnly: appendOnly)
        let fixture = try ReloadFixture()
        let menu = try String(contentsOfFile: LivePaths.menuConfig, encoding: .utf8)
        let configs = try (0 ..< count).map { index in
            let path = fixture.directory.appendingPathComponent("menu-\(index).json").path
            try menu.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let instances = try configs.map { config in
            try LiveChildServer(
                arguments: [
                    "--port", "0", "--host", "127.0.0.1", "--config", config, "--store", redis.url,
                    "--redis-timeout", String(redisTimeout), "--quiet"
                ] + flags)
        }
        self.redis = redis
        self.fixture = fixture
        self.configs = configs
        self.instances = instances
        nginx = try NginxProcess(upstreams: instances.map(\.port))
    }

    func stop() {
        nginx.stop()
        for instance in instances { instance.stop() }
        redis.stop()
    }

    /// A raw keep-alive connection through nginx.
    func throughNginx() throws -> LiveRawConnection { try LiveRawConnection(port: nginx.port) }

    /// A raw connection to instance `index` directly.
    func direct(_ index: Int) throws -> LiveRawConnection { try LiveRawConnection(port: instances[index].port) }
}

/// A session's view as one answer states it.
struct ScaleOutState: Equatable, CustomStringConvertible {
    var version: String
    var revision: Int
    /// `isExpanded` of every visible group, by id.
    var groups: [String: Bool]

    var description: String {
        "r\(revision) \(groups.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))"
    }
}

extension LiveRawConnection {
    /// One request with the session header and optional extra headers and body.
    func send(
        _ method: String, _ target: String, session: String? = nil, headers: [(String, String)] = [],
        body: String? = nil
    ) throws -> LiveResponse {
        try request(
            method, target, headers: (session.map { [("X-Session-Id", $0)] } ?? []) + headers,
            body: body.map { Array($0.utf8) } ?? [])
    }

    /// `POST /sessions`: the new session's id.
    func newSession(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let response = try send("POST", "/sessions")
        #expect(response.status == 201, "\(response)", sourceLocation: sourceLocation)
        return try #require(response.header("X-Session-Id"), sourceLocation: sourceLocation)
    }

    /// The whole table of `session` (`GET /rows?limit=500`) as its version, revision and groups.
    /// `fresh`: as Redis holds it now, not an instance's cached copy (its `If-None-Match` names a
    /// revision higher than any, of no menu: the instance fetches the session, and the tag never
    /// matches); otherwise as the instance has it (its cache may lag another instance's write
    /// until Redis's invalidation arrives).
    func state(of session: String, fresh: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> ScaleOutState
    {
        let response = try send(
            "GET", "/rows?limit=500", session: session,
            headers: fresh ? [("If-None-Match", #""scale-out-test-999999999""#)] : [])
        #expect(response.status == 200, "\(response)", sourceLocation: sourceLocation)
        return try Self.state(in: response, sourceLocation: sourceLocation)
    }

    /// ``state(of:fresh:sourceLocation:)`` of each session once every one is answered 200, asking
    /// again (within the `eventually` bound) while any is not: after Redis restarts, each HTTP
    /// thread's connection finds the old server gone on its first command (one 503) and reconnects.
    func states(of sessions: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [ScaleOutState] {
        var responses: [LiveResponse] = []
        let answered = eventually(every: .milliseconds(20)) {
            responses = sessions.compactMap {
                try? send(
                    "GET", "/rows?limit=500", session: $0, headers: [("If-None-Match", #""scale-out-test-999999999""#)])
            }
            return responses.count == sessions.count && responses.allSatisfy { $0.status == 200 }
        }
        #expect(answered, "not every session answered: \(responses.map(\.status))", sourceLocation: sourceLocation)
        return try responses.map { try Self.state(in: $0, sourceLocation: sourceLocation) }
    }

    private static func state(in response: LiveResponse, sourceLocation: SourceLocation) throws -> ScaleOutState {
        let page = try response.decode(LiveRowsPage.self, sourceLocation: sourceLocation)
        return ScaleOutState(
            version: page.version, revision: page.revision,
            groups: Dictionary(
                uniqueKeysWithValues: page.rows.compactMap { row in row.isExpanded.map { (row.id, $0) } }))
    }
}

/// The strong tag the server gives revision `revision` of a session on menu `version`.
func scaleOutTag(version: String, revision: Int) -> String {
    SessionEntityTag(prefix: SessionEntityTag.prefix(version: version), revision: revision).headerValue
}

/// The groups of the tests' Sichuan menu, nested ones included (beer, baijiu and soft drinks are in drinks).
let scaleOutGroups = ["main-courses", "breakfast", "drinks", "beer", "baijiu", "soft-drinks"]

/// A small deterministic generator (SplitMix64) so that a failing run can be replayed.
struct ScaleOutRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(below bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
