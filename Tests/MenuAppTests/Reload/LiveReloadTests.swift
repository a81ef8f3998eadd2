import Dispatch
import DurableTestSupport
import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuModel
import MenuTestSupport
import NaiveReference
import Synchronization
import Testing

@testable import MenuApp
@testable import MenuService
@testable import MenuSessions

/// One keep-alive client's fixed work against a server whose menu is being reloaded: sets of
/// random groups and pages of its own view, each answer checked against what its own writes and
/// the rule for reloads predict for the menu generation the answer names.
private struct ReloadingClient {
    let connection: RawHTTPConnection
    let session: String
    var expectation = ReloadExpectation()
    var random: SplitMix64
    var failures: [String] = []
    var generationsSeen = Set<Int>()

    init(port: Int, seed: UInt64) throws {
        connection = try RawHTTPConnection(port: port)
        let created = try connection.request("POST", "/sessions")
        guard created.status == 201, let id = created.header("X-Session-Id") else {
            throw LiveError("POST /sessions: \(created)")
        }
        session = id
        random = SplitMix64(state: seed)
    }

    mutating func fail(_ message: String) { if failures.count < 20 { failures.append(message) } }

    /// The generation an answer's `version` names, or nil (recorded as a failure).
    mutating func generation(of version: String?, versions: [String: Int], _ context: String) -> Int? {
        guard let version, let k = versions[version] else {
            fail("\(context): version \(String(describing: version)) is none of the menus written")
            return nil
        }
        generationsSeen.insert(k)
        return k
    }

    mutating func step(menus: [Int: Menu], versions: [String: Int]) throws {
        if Bool.random(using: &random) {
            let group = ReloadMenus.groupIDs.randomElement(using: &random)!
            let isExpanded = Bool.random(using: &random)
            let answer = try connection.request(
                "PUT", "/groups/\(group)/expansion", headers: [("X-Session-Id", session)],
                body: Array(#"{"isExpanded":\#(isExpanded)}"#.utf8))
            switch answer.status {
            case 200:
                let change = Self.decode(LiveChange.self, answer.body)
                guard let k = generation(of: change?.version, versions: versions, "PUT \(group)") else { return }
                expectation.acknowledge(group, isExpanded: isExpanded, generation: k)
                let view = expectation.view(at: k, menus: menus)
                if change?.count != view.count || change?.isExpanded != isExpanded {
                    fail(
                        "PUT \(group) on generation \(k): count \(String(describing: change?.count)), expected \(view.count)"
                    )
                }
            case 404, 409:
                // Only a group some generation lacks (or has as a row) may be refused, and nothing changes.
                let code = Self.decode(LiveErrorBody.self, answer.body)?.error.code
                let absentSomewhere = menus.values.contains { menu in
                    menu.node(withID: group).map { !menu.isGroup($0) } ?? true
                }
                if !absentSomewhere || (code != "unknown_group" && code != "not_a_group") {
                    fail("PUT \(group): \(answer.status) \(code ?? "?") for a group every menu has")
                }
            default:
                fail("PUT \(group): \(answer.status) \(answer.bodyText.prefix(200))")
            }
        }
        let offset = Int.random(in: 0 ..< 8, using: &random)
        let anonymous = Int.random(in: 0 ..< 5, using: &random) == 0
        let answer = try connection.request(
            "GET", "/rows?offset=\(offset)&limit=20",
            headers: anonymous ? [] : [("X-Session-Id", session)])
        guard answer.status == 200 else { return fail("GET /rows: \(answer.status) \(answer.bodyText.prefix(200))") }
        let page = Self.decode(LiveRowsPage.self, answer.body)
        guard let k = generation(of: page?.version, versions: versions, "GET /rows") else { return }
        let view = anonymous ? FlattenedView(menu: menus[k]!) : expectation.view(at: k, menus: menus)
        let expected = view.rows(offset: offset, limit: 20).map {
            "\($0.id) \($0.title) \($0.isExpanded.map(String.init) ?? "-")"
        }
        let rows = (page?.rows ?? []).map { "\($0.id) \($0.title) \($0.isExpanded.map(String.init) ?? "-")" }
        if rows != expected || page?.count != view.count {
            fail(
                "GET /rows offset \(offset) on generation \(k)\(anonymous ? " (no session)" : ""): \(rows) count \(String(describing: page?.count)), expected \(expected) count \(view.count)"
            )
        }
    }

    /// `bytes` as a `T` of the wire format, nil when they are not one (the caller records the failure).
    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) -> T? {
        try? JSONDecoder().decode(T.self, from: Data(bytes))
    }
}

extension AppTests {
    @Suite("Reload under load: clients paging and writing while the menu is swapped many times")
    struct LiveReloadTests {
        static let generations = 16
        static let clients = 4
        static let stepsPerClient = 120

        @Test(
            "every answer is whole and of one menu; each session is carried over exactly by the rule; with --data-dir it survives a restart",
            arguments: [false, true])
        func reloadsUnderConcurrentLoad(durable: Bool) throws {
            let directory = DurableTemporaryDirectory()
            defer { directory.remove() }
            let config = directory.file("menu.json")
            try ReloadMenus.write(generation: 1, to: config)
            let data = directory.file("data")
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
            var settings = ServerSettings()
            settings.port = 0
            settings.configPath = config
            settings.threads = 2
            if durable { settings.dataDirectory = data }
            let menus = Dictionary(
                uniqueKeysWithValues: (1 ... Self.generations).map { ($0, ReloadMenus.menu(generation: $0)) })
            let versions = Dictionary(uniqueKeysWithValues: menus.map { ($0.value.version, $0.key) })
            #expect(versions.count == Self.generations, "each generation has its own version")

            let server = try LiveServer(settings: settings).server
            var serverStopped = false
            defer { if !serverStopped { server.shutdown() } }
            let requests = Atomic<Int>(0)
            let reloadsCompleted = Atomic<Int>(0)
            let reloaderFinished = Atomic<Bool>(false)
            let finishedClients = Atomic<Int>(0)
            let reloadFailures = Mutex<[String]>([])
            // Reload k happens once the clients have made (k - 1) × spacing steps between them (or
            // they are all done): reloads and requests interleave for any scheduling.
            let spacing = Self.clients * Self.stepsPerClient / Self.generations
            let reloadsDone = DispatchSemaphore(value: 0)
            let reloader = Thread {
                defer {
                    reloaderFinished.store(true, ordering: .relaxed)
                    reloadsDone.signal()
                }
                for k in 2 ... Self.generations {
                    while requests.load(ordering: .relaxed) < (k - 1) * spacing
                        && finishedClients.load(ordering: .relaxed) < Self.clients
                    {
                        usleep(200)
                    }
                    do {
                        try ReloadMenus.write(generation: k, to: config)
                        let reload = try server.reload()
                        if reload.to != menus[k]!.version {
                            reloadFailures.withLock { $0.append("reload \(k) served \(reload.to)") }
                        }
                        reloadsCompleted.add(1, ordering: .relaxed)
                    } catch {
                        reloadFailures.withLock { $0.append("reload \(k): \(error)") }
                    }
                }
            }
            reloader.start()

            let outcomes = Mutex<
                [(session: String, expectation: ReloadExpectation, failures: [String], seen: Set<Int>)]
            >([])
            // One thread per client (not concurrentPerform, which runs only as many at once as there are cores).
            let clientsDone = DispatchSemaphore(value: 0)
            for index in 0 ..< Self.clients {
                Thread {
                    defer { clientsDone.signal() }
                    defer { finishedClients.add(1, ordering: .relaxed) }
                    do {
                        var client = try ReloadingClient(port: server.port, seed: UInt64(index + 1) * 7919)
                        for step in 0 ..< Self.stepsPerClient {
                            // Nor do the clients run more than a reload or two ahead of the reloads.
                            let due = step * (Self.generations - 1) / Self.stepsPerClient - 1
                            while reloadsCompleted.load(ordering: .relaxed) < due
                                && !reloaderFinished.load(ordering: .relaxed)
                            { usleep(200) }
                            try client.step(menus: menus, versions: versions)
                            requests.add(1, ordering: .relaxed)
                        }
                        let outcome = (client.session, client.expectation, client.failures, client.generationsSeen)
                        outcomes.withLock { $0.append(outcome) }
                    } catch {
                        outcomes.withLock { $0.append(("", ReloadExpectation(), ["client \(index): \(error)"], [])) }
                    }
                }.start()
            }
            let deadline = DispatchTime.now() + 120
            for _ in 0 ..< Self.clients {
                try #require(clientsDone.wait(timeout: deadline) == .success, "a client finished its work")
            }
            try #require(reloadsDone.wait(timeout: deadline) == .success, "the reloads finished")
            #expect(reloadFailures.withLock { $0 } == [])
            let results = outcomes.withLock { $0 }
            #expect(results.flatMap(\.failures) == [])
            let seen = results.reduce(into: Set<Int>()) { $0.formUnion($1.seen) }
            print(
                "LiveReloadTests (durable: \(durable)): \(Self.generations - 1) reloads; the clients saw \(seen.count) generations"
            )
            #expect(server.service.menu.version == menus[Self.generations]!.version)

            // After the last reload every session holds exactly what the rule says, in the store and over HTTP.
            func expectSessions(on server: RunningServer, _ when: String) throws {
                let final = Self.generations
                for result in results where !result.session.isEmpty {
                    let view = result.expectation.view(at: final, menus: menus)
                    let stored = FlattenedView(
                        menu: server.service.menu,
                        state: try server.store.state(of: try #require(SessionID(result.session))))
                    let menu = server.service.menu
                    for node in menu.nodes where menu.isGroup(node) {
                        #expect(
                            stored.isExpanded(node) == view.isExpanded(node),
                            "\(when): \(menu.id(of: node)) of session \(result.session)")
                    }
                    let connection = try RawHTTPConnection(port: server.port)
                    let page = ReloadingClient.decode(
                        LiveRowsPage.self,
                        try connection.request("GET", "/rows?limit=500", headers: [("X-Session-Id", result.session)])
                            .body)
                    #expect(page?.rows.map(\.id) == view.rows(offset: 0, limit: 500).map(\.id))
                }
            }
            try expectSessions(on: server, "after the reloads")
            if durable {
                server.shutdown()
                serverStopped = true
                let restarted = try LiveServer(settings: settings).server
                defer { restarted.shutdown() }
                try expectSessions(on: restarted, "after a restart")
            }
        }

        @Test(
            "an invalid new file changes nothing: the old menu goes on serving, every session as it was",
            arguments: [false, true])
        func anInvalidFileChangesNothing(durable: Bool) throws {
            let directory = DurableTemporaryDirectory()
            defer { directory.remove() }
            let config = directory.file("menu.json")
            try ReloadMenus.write(generation: 1, to: config)
            var settings = ServerSettings()
            settings.port = 0
            settings.configPath = config
            if durable {
                try FileManager.default.createDirectory(
                    atPath: directory.file("data"), withIntermediateDirectories: false)
                settings.dataDirectory = directory.file("data")
            }
            let server = try LiveServer(settings: settings).server
            defer { server.shutdown() }
            let connection = try RawHTTPConnection(port: server.port)
            let session = try #require(try connection.request("POST", "/sessions").header("X-Session-Id"))
            _ = try connection.request(
                "PUT", "/groups/seasonal/expansion", headers: [("X-Session-Id", session)],
                body: Array(#"{"isExpanded":true}"#.utf8))
            let before = try connection.request("GET", "/rows?limit=500", headers: [("X-Session-Id", session)]).bodyText
            // Two problems: both are reported, nothing is served from the file.
            try Data(#"{"items":[{"id":"a","title":"A"},{"id":"a","title":"again"},{"title":"no id"}]}"#.utf8).write(
                to: URL(fileURLWithPath: config))
            #expect {
                try server.reload()
            } throws: { error in
                let text = "\(error)"
                return text.contains("\"a\"") && text.contains("items[2]") && text.contains("problems")
            }
            #expect(
                try connection.request("GET", "/rows?limit=500", headers: [("X-Session-Id", session)]).bodyText
                    == before)
            #expect(server.service.menu.version == ReloadMenus.menu(generation: 1).version)
            // The same file again is no reload at all.
            try ReloadMenus.write(generation: 1, to: config)
            #expect(try server.reload().changed == false)
            #expect(
                try connection.request("GET", "/rows?limit=500", headers: [("X-Session-Id", session)]).bodyText
                    == before)
        }
    }
}
