// docs/clients.md's MenuClient example, compiled and run against a real server. The function
// below is that document's code block as written (a test checks that it still is).

import Foundation
import MenuClient
import MenuTestSupport
import Testing

/// Prints the first rows, collapses a group, and returns what to store for the next launch.
func showMenu(server: URL, saved: MenuSessionSnapshot?) async throws -> MenuSessionSnapshot {
    let session = MenuSession(configuration: MenuClientConfiguration(baseURL: server), restoring: saved)
    let table = try await MenuTable(session: session, pageSize: 50, prefetchPages: 1)
    for row in try await table.rows(in: 0 ..< 4) {
        let mark = row.isGroup ? (row.isExpanded == true ? "▾" : "▸") : " "
        print(String(repeating: "  ", count: row.depth) + mark + " " + row.title)
    }
    let update = try await table.setExpanded("main-courses", false)
    for change in update.changes {
        print("delete rows \(change.deletedRows), insert rows \(change.insertedRows); \(change.count) rows now")
    }
    return await session.snapshot  // keep it (a file, UserDefaults); on unknown_session the layout is restored from it
}

@Suite(.timeLimit(.minutes(10))) struct ClientsDocExampleTests {
    @Test func theClientsDocExampleIsThisFileVerbatim() throws {
        let document = try String(
            contentsOf: LivePaths.packageRoot.appendingPathComponent("docs/clients.md"), encoding: .utf8)
        let section = try #require(
            document.range(of: "## MenuClient: the Swift library").map { document[$0.upperBound...] })
        let start = try #require(section.range(of: "```swift\nimport MenuClient\n\n"))
        let end = try #require(section[start.upperBound...].range(of: "```"))
        let example = String(section[start.upperBound ..< end.lowerBound])
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        #expect(
            source.contains(example), "docs/clients.md's example and ClientsDocExampleTests.swift differ; change both")
    }

    @Test func theClientsDocExampleRunsAgainstTheServerAndItsSnapshotBringsTheSessionBack() async throws {
        let server = try ClientTestServer(config: try String(contentsOfFile: LivePaths.menuConfig, encoding: .utf8))
        defer { server.shutdown() }
        let url = server.configuration.baseURL
        let first = try await showMenu(server: url, saved: nil)
        let id = try #require(first.sessionID)
        let second = try await showMenu(server: url, saved: first)
        #expect(second.sessionID == id)
        let fresh = try await server.freshTable(sessionID: id)
        #expect(fresh.rows.first?.id == "main-courses" && fresh.rows.first?.isExpanded == false && fresh.revision == 1)
    }
}
