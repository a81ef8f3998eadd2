import ChildProcess
import DurableTestSupport
import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuModel
import MenuTestSupport
import NaiveReference
import Synchronization
import Testing

@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Durable: the menu-server executable killed mid-burst")
struct DurableCrashTests {
    /// What one client thread saw: the last acknowledged state of each group it toggled, and the
    /// toggle in flight when the server died (it may or may not have been applied).
    struct Acknowledged: Sendable {
        var session = ""
        var states: [String: Bool] = [:]
        var count = 0
        var inFlight: String?
    }

    final class Shared: Sendable {
        let results = Mutex<[Acknowledged]>([])
        let total = Atomic<Int>(0)
    }

    @Test("every acknowledged toggle survives SIGKILL mid-burst", arguments: [FsyncPolicy.always, .everysec])
    func acknowledgedTogglesSurviveSIGKILL(policy: FsyncPolicy) throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let (data, arguments) = try durableServerFiles(in: directory, fsync: policy)
        let menu = DurableFixtures.menu()
        let defaults = durableExpansion(SessionState(), menu: menu)

        let server = try LiveChildServer(arguments: arguments)
        let threads = 4
        let shared = Shared()
        let port = server.port
        let started = DispatchGroup()
        for worker in 0 ..< threads {
            started.enter()
            Thread.detachNewThread {
                defer { started.leave() }
                var seen = Acknowledged()
                defer { shared.results.withLock { $0.append(seen) } }
                guard let connection = try? LiveRawConnection(port: port),
                    let created = try? connection.request("POST", "/sessions"), created.status == 201,
                    let session = created.header("X-Session-Id")
                else { return }
                seen.session = session
                var random = SplitMix64(state: UInt64(worker))
                while true {
                    let group = DurableFixtures.groups[Int(random.next() % 5)]
                    seen.inFlight = group
                    guard
                        let response = try? connection.request(
                            "POST", "/groups/\(group)/toggle", headers: [("X-Session-Id", session)])
                    else { return }
                    guard response.status == 200 else { return }
                    guard let body = try? JSONDecoder().decode(LiveChange.self, from: Data(response.body)),
                        body.id == group
                    else { return }
                    seen.inFlight = nil
                    seen.states[group] = body.isExpanded
                    seen.count += 1
                    shared.total.add(1, ordering: .relaxed)
                }
            }
        }
        // Kill once the burst is well under way: 400 toggles acknowledged, however long that takes
        // (waited for up to 60 s, far more than any machine needs).
        #expect(
            eventually(within: .seconds(60), every: .milliseconds(1)) { shared.total.load(ordering: .relaxed) >= 400 },
            "400 toggles were not acknowledged within 60 s")
        _ = server.signalAndWait(SIGKILL, timeoutSeconds: 30)
        started.wait()
        let acknowledged = shared.results.withLock { $0 }
        #expect(acknowledged.count == threads && acknowledged.allSatisfy { !$0.session.isEmpty })
        #expect(acknowledged.reduce(0) { $0 + $1.count } >= 400)

        // Restart on the same directory: every acknowledged state is there.
        let restarted = try LiveChildServer(arguments: arguments)
        #expect(
            restarted.stderrContains(
                "sessions are kept in \(data) (journal fsync: \(policy.rawValue)); restored \(threads) sessions"),
            "\(restarted.stderrText.value)")
        let connection = try LiveRawConnection(port: restarted.port)
        for seen in acknowledged where !seen.session.isEmpty {
            let rows = try connection.request("GET", "/rows?limit=500", headers: [("X-Session-Id", seen.session)])
            #expect(rows.status == 200)
            let visible = try JSONDecoder().decode(LiveRowsPage.self, from: Data(rows.body)).rows
            for row in visible {
                guard let isExpanded = row.isExpanded else { continue }
                let expected = seen.states[row.id] ?? defaults[row.id]!
                #expect(
                    isExpanded == expected || (seen.inFlight == row.id && isExpanded == !expected),
                    "session \(seen.session) group \(row.id): \(isExpanded), acknowledged \(expected)")
            }
        }
        _ = restarted.signalAndWait(SIGTERM, timeoutSeconds: 30)
        #expect(restarted.termination == .exited(0))

        // Groups hidden under collapsed ones are not in /rows: check every group in-process.
        let store = try DurableSessionStore(directory: data, menu: menu)
        defer { store.close() }
        for seen in acknowledged where !seen.session.isEmpty {
            let state = durableExpansion(try store.state(of: try #require(SessionID(seen.session))), menu: menu)
            for group in DurableFixtures.groups {
                let expected = seen.states[group] ?? defaults[group]!
                #expect(
                    state[group] == expected || (seen.inFlight == group && state[group] == !expected),
                    "session \(seen.session) group \(group): \(String(describing: state[group])), acknowledged \(expected)"
                )
            }
        }
    }

    @Test("menu-server exits 2 naming the data directory when it does not exist")
    func missingDataDirectoryExitsTwo() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let config = directory.file("menu.json")
        try DurableFixtures.menuJSON.write(toFile: config, atomically: true, encoding: .utf8)
        let missing = directory.file("missing/data")
        let exit = try liveRun(try LivePaths.executable(), ["--port", "0", "--config", config, "--data-dir", missing])
        #expect(exit.status == 2)
        #expect(
            exit.stderr.contains("menu-server: cannot use data directory \(missing): it does not exist"),
            "\(exit.stderr)")
    }
}
