// The real server for MenuClient's tests: a RunningServer (libmicrohttpd) started in this process on
// 127.0.0.1, with a menu written for the test, and an independent reader of its full table.

import Foundation
import MenuApp
import MenuAppTestSupport
import MenuClient
import MenuTestSupport
import RedisClient
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A menu-server on 127.0.0.1 serving `config` from a file of its own (rewrite it and call
/// ``reload(with:)`` for a menu reload); stop with ``shutdown()``.
final class ClientTestServer: Sendable {
    let server: RunningServer
    let configPath: String
    var port: Int { server.port }
    var configuration: MenuClientConfiguration {
        MenuClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
    }

    /// Starts a server for `config` (JSON text) on `port` (0: any free port), its sessions in
    /// memory or, with `dataDirectory`, in the durable store there, or with `redis` in that Redis;
    /// `reloadEntryWindow` is `--reload-entry-window` (0: no reload entries).
    init(
        config: String, port: Int = 0, configPath: String? = nil, dataDirectory: String? = nil,
        redis: RedisEndpoint? = nil, reloadEntryWindow: Int? = nil
    ) throws {
        let path =
            configPath
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("menu-client-\(UUID().uuidString).json").path
        if configPath == nil { try Data(config.utf8).write(to: URL(fileURLWithPath: path)) }
        self.configPath = path
        var settings = ServerSettings()
        settings.port = port
        settings.host = "127.0.0.1"
        settings.configPath = path
        settings.dataDirectory = dataDirectory
        if let redis { settings.store = .redis(redis) }
        if let reloadEntryWindow { settings.reloadEntryWindowSeconds = reloadEntryWindow }
        server = try LiveServer(settings: settings).server
    }

    /// The same menu file served again on the same port by a new server (memory-only sessions:
    /// every session is gone), after this one stops.
    func restarted() throws -> ClientTestServer {
        let port = self.port
        shutdown()
        return try ClientTestServer(config: "", port: port, configPath: configPath)
    }

    /// Writes `config` over the menu file and reloads it.
    func reload(with config: String) throws {
        try Data(config.utf8).write(to: URL(fileURLWithPath: configPath))
        _ = try server.reload()
    }

    func shutdown() { server.shutdown(gracePeriod: .seconds(5)) }

    /// The whole table of session `sessionID` read afresh, page by page (500 rows each), with
    /// the version and revision every page came from (all pages must agree).
    func freshTable(sessionID: String) async throws -> (version: String, revision: Int, rows: [MenuRow]) {
        var rows: [MenuRow] = []
        var state: (String, Int)?
        while true {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/rows?offset=\(rows.count)&limit=500")!)
            request.setValue(sessionID, forHTTPHeaderField: "X-Session-Id")
            let (data, response) = try await URLSession.shared.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                throw LiveError("GET /rows for the fresh table: \(String(decoding: data, as: UTF8.self))")
            }
            let page = try JSONDecoder().decode(MenuRowsAnswer.self, from: data)
            if let state, state != (page.version, page.revision) {
                throw LiveError("the table moved while it was read")
            }
            state = (page.version, page.revision)
            rows += page.rows
            if page.rows.isEmpty || rows.count >= page.count { return (page.version, page.revision, rows) }
        }
    }
}

/// Menus written for the client's tests.
enum ClientTestMenus {
    /// `groups` top-level groups (expanded by default), each with `subgroups` groups (every third
    /// expanded by default) of `leaves` rows, plus a nested group in each subgroup; attributes on every fourth row.
    static func large(groups: Int = 12, subgroups: Int = 8, leaves: Int = 12, tag: String = "") -> String {
        var top: [String] = []
        for g in 0 ..< groups {
            var subs: [String] = []
            for s in 0 ..< subgroups {
                var items = (0 ..< leaves).map { l in
                    let attributes = l % 4 == 0 ? #","attributes":{"price":\#(l),"tags":["a",\#(l % 8 == 0)]}"# : ""
                    return #"{"id":"r\#(g)-\#(s)-\#(l)","title":"Row \#(g).\#(s).\#(l)\#(tag)"\#(attributes)}"#
                }
                items.append(
                    #"{"id":"n\#(g)-\#(s)","title":"Nested \#(g).\#(s)","items":[{"id":"m\#(g)-\#(s)","title":"Deep"}]}"#
                )
                subs.append(
                    #"{"id":"s\#(g)-\#(s)","title":"Sub \#(g).\#(s)","expanded":\#(s % 3 == 0),"items":[\#(items.joined(separator: ","))]}"#
                )
            }
            top.append(
                #"{"id":"g\#(g)","title":"Group \#(g)","expanded":true,"items":[\#(subs.joined(separator: ","))]}"#)
        }
        return #"{"title":"large","items":[\#(top.joined(separator: ","))]}"#
    }

    /// Every group id of ``large(groups:subgroups:leaves:tag:)``, and every row id.
    static func ids(groups: Int = 12, subgroups: Int = 8, leaves: Int = 12) -> (groups: [String], rows: [String]) {
        var groupIDs: [String] = []
        var rowIDs: [String] = []
        for g in 0 ..< groups {
            groupIDs.append("g\(g)")
            for s in 0 ..< subgroups {
                groupIDs += ["s\(g)-\(s)", "n\(g)-\(s)"]
                rowIDs += (0 ..< leaves).map { "r\(g)-\(s)-\($0)" } + ["m\(g)-\(s)"]
            }
        }
        return (groupIDs, rowIDs)
    }
}

/// Checks that every row `table` holds is the row a fresh read of the whole table has there,
/// at the same version, revision and count. Returns how many rows were cached.
@discardableResult
func expectCacheMatchesServer(
    _ table: MenuTable, server: ClientTestServer, _ context: @autoclosure () -> String,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> Int {
    let sessionID = try #require(await table.session.id, sourceLocation: sourceLocation)
    let fresh = try await server.freshTable(sessionID: sessionID)
    let cached = table.cachedRows
    #expect(
        table.version == fresh.version && table.revision == fresh.revision && cached.count == fresh.rows.count,
        "\(context()): table at \(table.version)/\(table.revision) with \(cached.count) rows, server at \(fresh.version)/\(fresh.revision) with \(fresh.rows.count)",
        sourceLocation: sourceLocation)
    guard cached.count == fresh.rows.count else { return 0 }
    var held = 0
    var mismatches: [String] = []
    for (index, row) in cached.enumerated() {
        guard let row else { continue }
        held += 1
        if row != fresh.rows[index], mismatches.count < 5 {
            mismatches.append("row \(index): cached \(row), server \(fresh.rows[index])")
        }
    }
    #expect(mismatches.isEmpty, "\(context()): \(mismatches.joined(separator: "; "))", sourceLocation: sourceLocation)
    return held
}
