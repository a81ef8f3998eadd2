// If-Match on the writes (RFC 9110 §13.1.1), written once and run over both transports: a write
// whose tag is not the session's current one answers 412 precondition_failed with the current
// revision and changes nothing.

import Foundation
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AppTests {
    @Suite("Contract: If-Match writes apply only on the state they name")
    struct ContractIfMatchTests {
        @Test(arguments: ContractTransport.allCases)
        func aWriteOnAStaleTagIs412WithTheCurrentRevisionAndChangesNothing(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let phone = server.client()
            let laptop = server.client()
            let session = try await phone.newSession()
            let tag0 = try #require(try await phone.get("/count", session: session).header("ETag"))
            // The laptop writes on the tag it read: accepted, the session moves to revision 1.
            let first = try await laptop.send(
                "POST", "/groups/drinks/toggle", session: session, headers: [("If-Match", tag0)])
            #expect(first.status == 200)
            #expect(try first.decode(LiveRevision.self).revision == 1)
            // The phone still holds revision 0: refused, with the revision it must catch up to.
            let refused = try await phone.send(
                "PUT", "/groups/main-courses/expansion", session: session,
                headers: [("If-Match", tag0)], body: Array(#"{"isExpanded":false}"#.utf8))
            try liveExpectError(refused, status: 412, code: "precondition_failed", extraKeys: ["revision"])
            #expect(try refused.decode(LiveRevision.self).revision == 1)
            let after = try await phone.get("/count", session: session)
            #expect(try after.decode(LiveCount.self).count == 17)  // drinks collapsed, main-courses untouched
            let tag1 = try #require(after.header("ETag"))
            #expect(tag1 != tag0)
            // With the current tag, in a list, or *, the write goes through; a weak tag never matches.
            #expect(
                try await phone.send(
                    "POST", "/groups/beer/toggle", session: session,
                    headers: [("If-Match", "\"nope\", \(tag1)")]
                ).status == 200)
            let weak = try await phone.send(
                "POST", "/groups/beer/toggle", session: session, headers: [("If-Match", "W/" + tag1)])
            try liveExpectError(weak, status: 412, code: "precondition_failed", extraKeys: ["revision"])
            let star = try await phone.send(
                "POST", "/groups/beer/toggle", session: session, headers: [("If-Match", "*")])
            #expect(try star.decode(LiveRevision.self).revision == 3)
            // A no-op write on a stale tag is refused too: the precondition comes first.
            let noop = try await phone.send(
                "PUT", "/groups/drinks/expansion", session: session,
                headers: [("If-Match", tag1)], body: Array(#"{"isExpanded":false}"#.utf8))
            #expect(noop.status == 412)
        }

        @Test(arguments: ContractTransport.allCases)
        func withoutASessionIfMatchNamesTheDefaultViewRevision0(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            let anonymous = try #require(try await client.get("/count").header("ETag"))
            let created = try await client.send("POST", "/groups/drinks/toggle", headers: [("If-Match", anonymous)])
            #expect(created.status == 200)
            #expect(created.header("X-Session-Id") != nil)
            let stale = anonymous.replacingOccurrences(of: "-0\"", with: "-1\"")
            let refused = try await client.send("POST", "/groups/drinks/toggle", headers: [("If-Match", stale)])
            try liveExpectError(refused, status: 412, code: "precondition_failed", extraKeys: ["revision"])
            #expect(try refused.decode(LiveRevision.self).revision == 0)
            #expect(refused.header("X-Session-Id") == nil)  // no session was made
        }

        @Test(arguments: ContractTransport.allCases)
        func aTagOfTheMenuBeforeAReloadNoLongerMatches(over transport: ContractTransport) async throws {
            let reloadable = try ContractReloadableServer(over: transport)
            defer { reloadable.shutdown() }
            let client = reloadable.server.client()
            let session = try await client.newSession()
            let before = try #require(try await client.get("/count", session: session).header("ETag"))
            #expect(try reloadable.reload(to: 2))
            let refused = try await client.send(
                "POST", "/groups/mains/toggle", session: session, headers: [("If-Match", before)])
            try liveExpectError(refused, status: 412, code: "precondition_failed", extraKeys: ["revision"])
            #expect(try refused.decode(LiveRevision.self).revision == 1)  // the reload is a revision
            let after = try await client.get("/count", session: session)
            #expect(after.header("ETag") != before)
            #expect(
                try await client.send("GET", "/count", session: session, headers: [("If-None-Match", before)]).status
                    == 200)
        }
    }
}
