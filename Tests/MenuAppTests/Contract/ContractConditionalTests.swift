// Revisions, entity tags and conditional requests (RFC 9110 §13), written once and run over both
// transports: in-process request values and real HTTP.

import Foundation
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AppTests {
    @Suite("Contract: revisions, ETags, If-None-Match and If-Match")
    struct ContractConditionalTests {
        /// The `revision` of a JSON answer.
        private func revision(_ response: LiveResponse) throws -> Int {
            try response.decode(LiveRevision.self).revision
        }

        @Test(arguments: ContractTransport.allCases)
        func rowsAndCountOfOneStateShareAStrongTagThatMovesWithEachChangingWrite(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let anonymousRows = try await client.get("/rows?limit=3")
            let anonymousCount = try await client.get("/count")
            let version = try anonymousCount.decode(LiveCount.self).version
            #expect(anonymousRows.header("ETag") == "\"\(version)-0\"")
            #expect(anonymousCount.header("ETag") == anonymousRows.header("ETag"))
            #expect(try revision(anonymousRows) == 0 && (try revision(anonymousCount)) == 0)

            let session = try await client.newSession()
            #expect(try await client.get("/count", session: session).header("ETag") == "\"\(version)-0\"")
            #expect(try revision(try await client.toggle("main-courses", session: session)) == 1)
            #expect(try revision(try await client.setExpansion("main-courses", false, session: session)) == 1)  // a no-op
            #expect(try revision(try await client.setExpansion("beer", false, session: session)) == 2)
            #expect(try revision(try await client.toggle("drinks", session: session)) == 3)
            #expect(try revision(try await client.toggle("beer", session: session)) == 4)  // hidden: still a change
            let rows = try await client.get("/rows?offset=5", session: session)
            let count = try await client.get("/count", session: session)
            #expect(try revision(rows) == 4 && (try revision(count)) == 4)
            #expect(rows.header("ETag") == "\"\(version)-4\"")
            #expect(count.header("ETag") == rows.header("ETag"))
            for response in [anonymousRows, anonymousCount, rows, count] {
                liveExpectJSONHeaders(response)
                #expect(response.header("Cache-Control") == "private, no-cache")
                #expect(response.header("Vary") == "X-Session-Id")
            }
        }

        @Test(arguments: ContractTransport.allCases)
        func ifNoneMatchWithTheCurrentTagAnswers304WithTheTagAndNoBody(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            _ = try await client.toggle("drinks", session: session)
            let tag = try #require(try await client.get("/count", session: session).header("ETag"))
            let weak = "W/" + tag
            for (target, condition) in [
                ("/rows", tag), ("/count", tag), ("/rows?limit=2", "\"other\", \(weak)"), ("/count", "*"),
                ("/rows", " ,\t\(tag) , ")
            ] {
                for method in ["GET", "HEAD"] {
                    let response = try await client.send(
                        method, target, session: session, headers: [("If-None-Match", condition)])
                    #expect(response.status == 304, "\(method) \(target) If-None-Match: \(condition): \(response)")
                    #expect(response.body.isEmpty)
                    #expect(response.header("ETag") == tag)
                    #expect(response.header("Cache-Control") == "private, no-cache")
                    #expect(response.header("Vary") == "X-Session-Id")
                    #expect(response.header("Content-Type") == nil)
                }
            }
            // The tag the one /rows answered is good for /count too, and a tag of another state is not.
            let stale = tag.replacingOccurrences(of: "-1\"", with: "-0\"")
            let changed = try await client.send("GET", "/count", session: session, headers: [("If-None-Match", stale)])
            #expect(changed.status == 200)
            #expect(try revision(changed) == 1)
            // The anonymous view is revision 0, whatever a session is at.
            let anonymous = try await client.send("GET", "/count", headers: [("If-None-Match", stale)])
            #expect(anonymous.status == 304)
        }

        @Test(arguments: ContractTransport.allCases)
        func aMalformedPreconditionIsA400NamingTheHeaderNeverIgnored(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let session = try await client.newSession()
            for value in [
                "", "abc", "\"unterminated", "W/abc", "\"a\" \"b\"", "*, \"a\"", "\"a b\"", "w/\"a\"",
                String(repeating: "\"t\",", count: 65)
            ] {
                let read = try await client.send("GET", "/rows", session: session, headers: [("If-None-Match", value)])
                try liveExpectError(read, status: 400, code: "invalid_parameter")
                #expect(read.text.contains("If-None-Match"), "\(read)")
                let write = try await client.send(
                    "POST", "/groups/drinks/toggle", session: session, headers: [("If-Match", value)])
                try liveExpectError(write, status: 400, code: "invalid_parameter")
                #expect(write.text.contains("If-Match"), "\(write)")
            }
            #expect(try revision(try await client.get("/count", session: session)) == 0)  // no write went through
        }
    }
}
