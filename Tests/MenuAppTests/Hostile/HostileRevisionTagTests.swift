// Hostile entity tags on session reads and writes (issue 16's read-your-writes): whatever
// revision a client's If-None-Match or If-Match seems to name (huge, negative, malformed, of no
// menu, 64 of them), a real server on a real Redis store answers 200, 304, 400 or 412, never a
// 5xx, and the session is unchanged by a refused write.

import Foundation
import HTTPTestSupport
import MenuApp
import MenuAppTestSupport
import RedisTestSupport
import Testing

extension AppTests {
    @Suite(
        "Hostile: revision tags against a Redis store",
        .enabled(if: FileManager.default.isExecutableFile(atPath: RedisServerProcess.executable)))
    struct HostileRevisionTagTests {
        static let tags: [String] = [
            #""x-999999999999999999""#, #""x-9999999999999999999999999""#, #""x--1""#, #""-""#, #""--""#, #""x-""#,
            #""x-0""#,
            #""x-007""#, #"W/"x-3""#, #""x-1e9""#, #""x- 1""#, #""\#u{00FF}-5""#, "*", "", ",", #""x-1", *"#,
            #""unterminated"#,
            (0 ..< 64).map { #""t-\#($0)""# }.joined(separator: ", "),
            (0 ..< 65).map { #""t-\#($0)""# }.joined(separator: ","),
            #""a-1","b-2","c-999999999999999999""#, String(repeating: "\"x-1\",", count: 2000)
        ]

        @Test
        func noTagMakesAServerErrorOrChangesTheSession() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let server = try LiveServer { settings in
                settings.store = .redis(redis.endpoint)
                settings.redisTimeoutMilliseconds = 2_000
            }
            defer { server.shutdown() }
            let connection = try server.connect()
            let session = try connection.newSession()
            for tag in Self.tags {
                for target in ["/count", "/rows?limit=2", "/session", "/nodes/beer", "/changes?since=0"] {
                    let read = try connection.send("GET", target, session: session, headers: [("If-None-Match", tag)])
                    #expect([200, 304, 400, 431].contains(read.status), "GET \(target) with \(tag.prefix(60)): \(read)")
                }
                let write = try connection.send(
                    "POST", "/groups/breakfast/toggle", session: session, headers: [("If-Match", tag)])
                #expect(
                    [400, 412, 431].contains(write.status) || (write.status == 200 && tag == "*"),
                    "toggle with \(tag.prefix(60)): \(write)")
                if write.status == 200 {
                    #expect(try connection.send("POST", "/groups/breakfast/toggle", session: session).status == 200)  // back as it was
                }
            }
            let state = try connection.state(of: session)
            #expect(state.groups["breakfast"] == true, "no refused write changed the session: \(state)")
        }
    }
}
