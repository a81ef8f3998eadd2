// With --data-dir, a session's revision, and so its ETag, survive a restart, over both transports;
// its splice history does not (a since before the restart is 410).

import DurableTestSupport
import Foundation
import MenuApp
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AppTests {
    @Suite("Contract: revisions and ETags survive a restart of the durable store")
    struct ContractDurableRevisionTests {
        @Test(arguments: ContractTransport.allCases)
        func aRestartKeepsTheRevisionAndTheTagSoA304StillAnswers(over transport: ContractTransport) async throws {
            let directory = DurableTemporaryDirectory()
            defer { directory.remove() }
            let first = try transport.start { $0.dataDirectory = directory.path }
            let client = first.client()
            let session = try await client.newSession()
            for group in ["main-courses", "drinks", "beer"] { _ = try await client.toggle(group, session: session) }
            let before = try await client.get("/count", session: session)
            first.shutdown()

            let second = try transport.start { $0.dataDirectory = directory.path }
            defer { second.shutdown() }
            let again = second.client()
            let after = try await again.get("/count", session: session)
            #expect(try after.decode(LiveRevision.self).revision == 3)
            #expect(after.header("ETag") == before.header("ETag"))
            let tag = try #require(before.header("ETag"))
            #expect(
                try await again.send("GET", "/rows", session: session, headers: [("If-None-Match", tag)]).status == 304)
            #expect(
                try await again.send("POST", "/groups/beer/toggle", session: session, headers: [("If-Match", tag)])
                    .status == 200)
            // The history starts again at the restart: the write after it is there, one before it is gone.
            try liveExpectError(try await again.get("/changes?since=2", session: session), status: 410, code: "gone")
            let since3 = try await again.get("/changes?since=3", session: session)
            #expect(since3.status == 200)
            #expect(since3.text.hasSuffix(#""changes":[{"revision":4,"change":null}]}"#), "\(since3.text)")  // beer is hidden under drinks
        }
    }
}
