// What a caller gets when the server refuses: MenuClientError with the server's status, code and
// message, and the table left as it was.

import Foundation
import MenuClient
import Testing

@Suite(.timeLimit(.minutes(2))) struct ClientErrorTests {
    @Test func aRefusedWriteThrowsWhatTheServerSaidAndLeavesTheTableAsItWas() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 2))
        defer { server.shutdown() }
        let table = try await MenuTable(session: MenuSession(configuration: server.configuration))
        _ = try await table.rows(in: 0 ..< table.count)
        let before = table.cachedRows
        for (id, status, code) in [("r0-0-0", 409, "not_a_group"), ("nothing-here", 404, "unknown_group")] {
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
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 1, subgroups: 1, leaves: 1))
        let configuration = server.configuration
        server.shutdown()
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
