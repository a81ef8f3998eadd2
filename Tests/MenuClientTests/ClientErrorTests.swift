// What a caller gets when the server refuses: MenuClientError with the server's status, code and
// message, and the table left as it was.

import Foundation
import HTTPTestSupport
import MenuClient
import Testing

@Suite(.timeLimit(.minutes(10))) struct ClientErrorTests {
    @Test func aRefusedWriteThrowsWhatTheServerSaidAndLeavesTheTableAsItWas() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 2))
        defer { server.shutdown() }
        let table = try await MenuTable(session: MenuSession(configuration: server.configuration))
        _ = try await table.rows(in: 0 ..< table.count)
        let before = table.cachedRows
        // An id a person typed with a query's or an escape's characters in it reaches the server as
        // that id (percent-encoded), not as another request: the answer names it. (The server
        // decodes the path before routing, so an encoded slash is a path no route has.)
        for (id, status, code) in [
            ("r0-0-0", 409, "not_a_group"), ("nothing-here", 404, "unknown_group"),
            ("g0?x=1", 404, "unknown_group"), ("50% off", 404, "unknown_group"),
            ("g0/toggle", 404, "not_found")
        ] {
            do {
                try await table.setExpanded(id, false)
                Issue.record("setExpanded(\(id)) succeeded")
            } catch {
                guard case .server(let got, let gotCode, let message, _, _, _) = error else {
                    Issue.record("expected the server's error, got \(error)")
                    continue
                }
                #expect(got == status && gotCode == code && message.contains(id), "\(error)")
                #expect(error.code == code && error.description.contains(message))
            }
        }
        do {
            try await table.reveal("nothing-here")
            Issue.record("reveal succeeded")
        } catch {
            #expect(error.code == "unknown_node")
        }
        #expect(table.cachedRows == before && table.revision == 0)
    }

    @Test func noServerIsATransportErrorNamingTheRequest() async throws {
        // A port bound but not listening: refused, and no other test's server can take it meanwhile
        // (a port whose server was shut down can be, and its client then talks to that server).
        let nobody = try RefusingLoopbackPort()
        defer { nobody.close() }
        let configuration = MenuClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(nobody.port)")!)
        do {
            _ = try await MenuTable(session: MenuSession(configuration: configuration))
            Issue.record("a table opened with no server")
        } catch {
            guard case .transport(let detail) = error else {
                Issue.record("expected a transport error, got \(error)")
                return
            }
            #expect(detail.hasPrefix("POST /sessions"), "\(detail)")
        }
    }
}
