// Client and server agree on every field: each answer the real server sends, decoded with the
// client's wire types and encoded again, is the same JSON (every key, every value, explicit
// nulls), read by the tests' own JSON reader (LiveJSON), not the client's.

import Foundation
import MenuClient
import MenuTestSupport
import Testing

@testable import MenuClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(10))) struct WireAgreementTests {
    /// One raw exchange with the server.
    private func exchange(
        _ server: ClientTestServer, _ method: String, _ target: String, session: String? = nil,
        headers: [(String, String)] = [], body: String? = nil
    ) async throws -> (status: Int, etag: String?, body: Data) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)\(target)")!)
        request.httpMethod = method
        if let session { request.setValue(session, forHTTPHeaderField: "X-Session-Id") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body.map { Data($0.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, http.value(forHTTPHeaderField: "ETag"), data)
    }

    /// Decodes `body` as `T`, encodes it again and expects the same JSON as the server sent.
    private func expectRoundTrip<T: Codable>(
        _ type: T.Type, _ body: Data, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let decoded = try JSONDecoder().decode(T.self, from: body)
        let server = try JSONDecoder().decode(LiveJSON.self, from: body)
        let client = try JSONDecoder().decode(LiveJSON.self, from: JSONEncoder().encode(decoded))
        #expect(
            client == server,
            "\(T.self): the server sent \(String(decoding: body, as: UTF8.self)), the client reads \(client)",
            sourceLocation: sourceLocation)
    }

    @Test func everyAnswerOfTheContractDecodesToTheClientTypesAndBackWithoutLosingAField() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 3))
        defer { server.shutdown() }
        let created = try await exchange(server, "POST", "/sessions")
        #expect(created.status == 201)
        try expectRoundTrip(MenuSessionCreatedAnswer.self, created.body)
        let id = try JSONDecoder().decode(MenuSessionCreatedAnswer.self, from: created.body).sessionId

        let count = try await exchange(server, "GET", "/count", session: id)
        try expectRoundTrip(MenuCountAnswer.self, count.body)
        // Rows, groups (expanded and collapsed), attributes, a null parentId: the whole table.
        let rows = try await exchange(server, "GET", "/rows?limit=500", session: id)
        try expectRoundTrip(MenuRowsAnswer.self, rows.body)
        let page = try JSONDecoder().decode(MenuRowsAnswer.self, from: rows.body)
        #expect(
            page.rows.contains { $0.isGroup && $0.isExpanded == true }
                && page.rows.contains { $0.isGroup && $0.isExpanded == false })
        #expect(page.rows.contains { $0.attributes != nil } && page.rows.contains { $0.parentId == nil })

        let toggled = try await exchange(server, "POST", "/groups/s0-0/toggle", session: id)
        try expectRoundTrip(MenuChangeAnswer.self, toggled.body)
        #expect(try JSONDecoder().decode(MenuChangeAnswer.self, from: toggled.body).change != nil)
        // A hidden group: index and change are null.
        let hidden = try await exchange(
            server, "PUT", "/groups/n0-0/expansion", session: id, body: #"{"isExpanded":true}"#)
        try expectRoundTrip(MenuChangeAnswer.self, hidden.body)
        #expect(try JSONDecoder().decode(MenuChangeAnswer.self, from: hidden.body).index == nil)
        // The portable layout, and a session created from it (with an id the menu has not).
        let state = try await exchange(server, "GET", "/session", session: id)
        try expectRoundTrip(MenuSessionStateAnswer.self, state.body)
        let layout = try JSONDecoder().decode(MenuSessionStateAnswer.self, from: state.body).expansion
        #expect(layout.base == .default && layout.collapsedIDs == ["s0-0"] && layout.expandedIDs == ["n0-0"])
        var posted = layout.json
        if case .object(var object) = posted {
            object["collapsed"] = .array([.string("s0-0"), .string("gone")])
            posted = .object(object)
        }
        let recreated = try await exchange(
            server, "POST", "/sessions", body: String(decoding: try JSONEncoder().encode(posted), as: UTF8.self))
        #expect(recreated.status == 201)
        try expectRoundTrip(MenuSessionCreatedAnswer.self, recreated.body)
        #expect(try JSONDecoder().decode(MenuSessionCreatedAnswer.self, from: recreated.body).ignored == ["gone"])

        // A recursive set and an expand-all: splices that remove and insert.
        let recursive = try await exchange(
            server, "PUT", "/groups/g1/expansion", session: id, body: #"{"isExpanded":true,"recursive":true}"#)
        try expectRoundTrip(MenuChangeAnswer.self, recursive.body)
        let all = try await exchange(server, "PUT", "/expansion", session: id, body: #"{"all":"collapsed"}"#)
        try expectRoundTrip(MenuExpandAllAnswer.self, all.body)
        let collapsed = try JSONDecoder().decode(MenuExpandAllAnswer.self, from: all.body)
        #expect(
            collapsed.all == .collapsed && collapsed.change.at == 0 && collapsed.change.removed > 0
                && collapsed.change.inserted == 2)
        _ = try await exchange(server, "PUT", "/expansion", session: id, body: #"{"all":"default"}"#)
        let changes = try await exchange(server, "GET", "/changes?since=0", session: id)
        try expectRoundTrip(MenuChangesAnswer.self, changes.body)
        #expect(
            try JSONDecoder().decode(MenuChangesAnswer.self, from: changes.body).changes.map(\.change).contains(nil))

        let visibleNode = try await exchange(server, "GET", "/nodes/s0-1", session: id)
        try expectRoundTrip(MenuNodeAnswer.self, visibleNode.body)
        let hiddenNode = try await exchange(server, "GET", "/nodes/m0-0", session: id)
        try expectRoundTrip(MenuNodeAnswer.self, hiddenNode.body)
        #expect(try JSONDecoder().decode(MenuNodeAnswer.self, from: hiddenNode.body).row == nil)

        // Errors: a 412 with its revision, a not_visible with its path.
        let stale = try await exchange(
            server, "POST", "/groups/g0/toggle", session: id, headers: [("If-Match", #""x-0""#)])
        #expect(stale.status == 412)
        try expectRoundTrip(MenuErrorAnswer.self, stale.body)
        #expect(try JSONDecoder().decode(MenuErrorAnswer.self, from: stale.body).revision == 5)
        let notVisible = try await exchange(server, "GET", "/rows?after=m0-0", session: id)
        try expectRoundTrip(MenuErrorAnswer.self, notVisible.body)
        #expect(
            try JSONDecoder().decode(MenuErrorAnswer.self, from: notVisible.body).error.path == ["g0", "s0-0", "n0-0"])
    }

    @Test func aClosedRowAndTheNextBoundaryDecodeAndRoundTrip() async throws {
        let config = #"""
            {"timeZone": "UTC", "items": [{"id": "bar", "title": "Bar", "expanded": true,
              "hours": [{"from": "22:00", "to": "02:00"}], "items": [{"id": "beer", "title": "Beer"}]}]}
            """#
        let server = try ClientTestServer(config: config)
        defer { server.shutdown() }
        let noon = try await exchange(server, "GET", "/rows?at=2026-12-07T12:00:00Z")
        try expectRoundTrip(MenuRowsAnswer.self, noon.body)
        let closed = try JSONDecoder().decode(MenuRowsAnswer.self, from: noon.body)
        #expect(closed.nextChangeAt == "2026-12-07T22:00:00Z")
        #expect(closed.rows.map(\.availability?.state) == [.closed, .closed])
        #expect(closed.rows.first?.availability?.until == "2026-12-07T22:00:00Z")
        let night = try await exchange(server, "GET", "/count?at=2026-12-07T23:00:00Z")
        try expectRoundTrip(MenuCountAnswer.self, night.body)
        #expect(try JSONDecoder().decode(MenuCountAnswer.self, from: night.body).nextChangeAt == "2026-12-08T02:00:00Z")
    }

    @Test func theIfMatchTagTheClientBuildsIsTheETagTheServerSends() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 1, subgroups: 1, leaves: 1))
        defer { server.shutdown() }
        let created = try await exchange(server, "POST", "/sessions")
        let id = try JSONDecoder().decode(MenuSessionCreatedAnswer.self, from: created.body).sessionId
        _ = try await exchange(server, "POST", "/groups/g0/toggle", session: id)
        let count = try await exchange(server, "GET", "/count", session: id)
        let answer = try JSONDecoder().decode(MenuCountAnswer.self, from: count.body)
        #expect(count.etag == MenuHTTP.entityTag(version: answer.version, revision: answer.revision))
        #expect(MenuHTTP.entityTag(version: "a b/é", revision: 7) == #""a%20b%2F%C3%A9-7""#)
    }
}
