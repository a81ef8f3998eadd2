import Foundation
import MenuApp
import MenuAppTestSupport
import Synchronization
import Testing

extension AppTests {
    /// A flood of distinct uncached queries (each a filtered view to build) from many connections at
    /// once: past `--search-builds` a miss is `429 busy` with `Retry-After: 1`, never another 5xx, a
    /// lost answer or a wedged server; `/healthz` is answered after it, and the metrics count exactly
    /// the refusals the clients saw.
    @Suite("Hostile search floods: distinct uncached queries past --search-builds")
    struct HostileSearchFloodTests {
        @Test
        func everyQueryOfAFloodIsAnsweredOrBusyAndTheServerStaysServing() throws {
            // 20,000 rows: a miss costs long enough that misses from 8 connections overlap.
            let rows = (0 ..< 20_000).map { #"{"id":"r\#($0)","title":"Dish \#($0)"}"# }.joined(separator: ",")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "search-flood-\(UUID().uuidString).json")
            try Data(#"{"items":[{"id":"g","title":"Group","items":[\#(rows)]}]}"#.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let server = try LiveServer {
                $0.configPath = file.path
                $0.threads = 8
                $0.searchBuilds = 1
            }
            defer { server.shutdown() }

            let (connections, queriesEach) = (8, 25)
            let seen = Mutex<(answered: Int, busy: Int, problems: [String])>((0, 0, []))
            DispatchQueue.concurrentPerform(iterations: connections) { client in
                do {
                    let connection = try LiveRawConnection(port: server.port)
                    for query in 0 ..< queriesEach {
                        let route = ["/count", "/search", "/rows"][query % 3]
                        let response = try connection.request("GET", "\(route)?q=dish%20\(client * 1_000 + query)")
                        let code = (try? JSONDecoder().decode(LiveErrorBody.self, from: Data(response.body)))?.error
                            .code
                        seen.withLock { seen in
                            switch (response.status, code) {
                            case (200, nil): seen.answered += 1
                            case (429, "busy") where response.header("Retry-After") == "1": seen.busy += 1
                            default:
                                seen.problems.append(
                                    "\(route): \(response.status) \(code ?? "") \(response.header("Retry-After") ?? "no Retry-After")"
                                )
                            }
                        }
                    }
                } catch {
                    seen.withLock { $0.problems.append("client \(client): \(error)") }
                }
            }
            let (answered, busy, problems) = seen.withLock { $0 }
            #expect(problems.isEmpty, "\(problems.prefix(5))")
            #expect(answered + busy == connections * queriesEach)
            print("HostileSearchFloodTests: \(answered) answered, \(busy) busy of \(connections * queriesEach)")

            let connection = try server.connect()
            #expect(try connection.request("GET", "/healthz").status == 200)
            let metrics = LiveMetrics(try connection.request("GET", "/metrics").text)
            #expect(metrics["menu_search_refused_total"] == Double(busy))
            #expect(metrics["menu_search_builds_running"] == 0)
            #expect(
                try connection.request("GET", "/count?q=dish%201").status == 200,
                "a refused query is answered once the slot is free")
        }
    }
}
