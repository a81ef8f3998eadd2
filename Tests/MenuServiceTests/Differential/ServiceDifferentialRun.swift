import Foundation
import HTTPCore
import HTTPTestSupport
import MenuModel
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuTestSupport
import NaiveReference

/// What the differential test found wrong, with the request it was found on.
struct ServiceDifference: Error, CustomStringConvertible {
    var description: String
}

/// One run of the service-level differential test: a random menu served in-process
/// (``MenuAPI/respond(to:)``, from a store keeping `history` splices per session), and
/// several sessions on it, each with its twin ``NaiveSession``. ``step(_:)`` makes one random
/// write for one session and then reads what the contract says must follow from it; the first
/// difference is thrown.
///
/// Invariant: each client's naive twin has seen exactly the writes the service accepted for it;
/// `listings` holds the naive listing of each of the client's last `history + 2` revisions (what
/// a `/changes` replay starts from). Cost: a step is O(rows) for the whole-table read, plus
/// O(n) per naive command, for n nodes.
final class ServiceDifferentialRun {
    struct Client {
        var naive: NaiveSession
        /// nil until the client's first accepted write created its session (it sends no
        /// `X-Session-Id` until then, and reads the default view).
        var id: String?
        /// The naive listing now, and at each of the last revisions.
        var listing: [NaiveRow]
        var listings: [Int: [NaiveRow]] = [:]
        /// The `ETag` of its last `/rows`.
        var tag: String?
        /// The revision of the last reload's entry in its feed (nil: none since its session began).
        var reloadedAt: Int?
        /// Its twin just before and just after that reload: what the rows the reload's entry
        /// leaves alone show, and what the rows after it show.
        var aroundReload: (before: NaiveSession, after: NaiveSession)?

        init(naive: NaiveSession) {
            self.naive = naive
            listing = naive.menu.listing()
            listings[0] = listing
        }
    }

    private(set) var service: MenuAPI
    private(set) var version: String
    let history: Int
    /// The limits the store was opened with (`history` splices a session).
    private(set) var limits: SessionLimits
    private(set) var groupIDs: [String] = []
    private(set) var rowIDs: [String] = []
    private(set) var allIDs: [String] = []
    /// The menu served now, as edited by ``reload(edits:)`` so far.
    private(set) var edits: MenuEdits
    /// The services of the store instances the run moves between (Redis), by store: a reload is
    /// installed on each, as every instance of a deployment reloads.
    private var services: [ObjectIdentifier: MenuAPI] = [:]
    var clients: [Client]
    var rng: SplitMix64
    /// The last operations, for the failure message.
    var trail: [String] = []

    /// A run on the menu of `spec`, served from the store `makeStore` opens with the limits given.
    init(
        spec: [TreeSpec], sessions: Int, history: Int, rng: SplitMix64,
        store makeStore: (MenuGeneration, SessionLimits) throws -> any SessionStore
    ) throws {
        let menu = try makeMenu(spec)
        limits = SessionLimits.defaults
        limits.changeHistory = history
        service = MenuAPI(menu: menu, store: try makeStore(MenuGeneration(menu), limits), maxLimit: 100_000)
        version = menu.version
        self.history = history
        self.rng = rng
        edits = MenuEdits(spec)
        clients = (0 ..< sessions).map { _ in Client(naive: NaiveSession(spec: spec)) }
        services[ObjectIdentifier(service.store as AnyObject)] = service
        takeIDs(of: spec)
        // All but the last session start by POST /sessions; the last by its first write.
        for index in clients.indices.dropLast() {
            let created = send("POST", "/sessions", client: index)
            try expect(created.status == 201, "POST /sessions answered \(created.status)")
            clients[index].id = created.header("X-Session-Id")
        }
    }

    private func takeIDs(of spec: [TreeSpec]) {
        let items = NaiveMenu(spec: spec).preorder()
        groupIDs = items.filter(\.isGroup).map(\.id)
        rowIDs = items.filter { !$0.isGroup }.map(\.id)
        allIDs = items.map(\.id)
    }

    // MARK: Requests

    func send(
        _ method: String, _ path: String, query: [(String, String)] = [], client: Int,
        headers: [(name: String, value: String)] = [], body: String? = nil
    ) -> HTTPResponse {
        var all = headers
        if let id = clients[client].id { all.append(("X-Session-Id", id)) }
        return service.respond(
            to: HTTPRequest(
                method: method, path: path, query: query.map { (name: $0.0, value: $0.1) },
                headers: all, body: body.map { Array($0.utf8) } ?? []))
    }

    func decode<Value: Decodable>(_ type: Value.Type, _ response: HTTPResponse, _ what: String) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(response.body))
        } catch {
            throw ServiceDifference(
                description: "\(what): \(error) in \(String(decoding: response.body, as: UTF8.self).prefix(400))")
        }
    }

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw ServiceDifference(description: message()) }
    }

    /// The tag the contract gives a read of revision `revision` (the random menus' versions are
    /// hex digits, which need no percent-encoding).
    func tag(revision: Int) -> String { "\"\(version)-\(revision)\"" }

    /// Sends `command` the way the contract spells it (a plain set now and then with an explicit
    /// `"recursive": false`).
    func send(_ command: SessionCommand, by client: Int, headers: [(name: String, value: String)]) -> HTTPResponse {
        switch command {
        case .toggle(let id): return send("POST", "/groups/\(id)/toggle", client: client, headers: headers)
        case .set(let id, let expanded):
            let recursive = Bool.random(using: &rng) ? "" : ",\"recursive\":false"
            return send(
                "PUT", "/groups/\(id)/expansion", client: client, headers: headers,
                body: "{\"isExpanded\":\(expanded)\(recursive)}")
        case .setSubtree(let id, let expanded):
            return send(
                "PUT", "/groups/\(id)/expansion", client: client, headers: headers,
                body: "{\"recursive\":true,\"isExpanded\":\(expanded)}")
        case .setAll(let mode):
            return send("PUT", "/expansion", client: client, headers: headers, body: "{\"all\":\"\(mode.rawValue)\"}")
        case .reveal(let id): return send("POST", "/nodes/\(id)/reveal", client: client, headers: headers)
        case .select(let id, let selected, _):
            return send(
                "PUT", "/nodes/\(id)/selection", client: client, headers: headers, body: "{\"selected\":\(selected)}")
        case .selectAll(let selected, _):
            return send("PUT", "/selection", client: client, headers: headers, body: "{\"all\":\(selected)}")
        }
    }

    /// Serves the same sessions from `store` from now on (a durable store reopened: a restart):
    /// every session's whole table must come back with its revision and `ETag`, and its splices
    /// must not (`/changes` answers only the current revision; anything older is 410).
    func restart(on store: any SessionStore) throws {
        service = MenuAPI(menu: service.menu, store: store, maxLimit: 100_000)
        for client in clients.indices where clients[client].id != nil {
            try checkTable(of: client)
            let revision = clients[client].naive.revision
            let now = send("GET", "/changes", query: [("since", String(revision))], client: client)
            try expect(
                now.status == 200 && (now.json["changes"] as? [Any])?.isEmpty == true,
                "/changes at the current revision after a restart answered \(now.status) \(now.json)")
            if revision > 0 {
                let older = send("GET", "/changes", query: [("since", String(revision - 1))], client: client)
                try expect(
                    older.status == 410, "/changes?since=\(revision - 1) after a restart answered \(older.status)")
            }
        }
    }

    /// Serves the same sessions from `store`, another instance of a store shared by instances
    /// (Redis): once `store` reads every session at the revision its client holds (its cache
    /// hears of the other instance's writes from the backend; each waited for at most `bound`), every session's
    /// whole table must be the oracle's, and the run goes on there.
    func switchInstance(to store: any SessionStore, within bound: Duration = .seconds(30)) throws {
        service = self.service(of: store)
        for client in clients.indices {
            guard let text = clients[client].id, let id = SessionID(text) else { continue }
            let revision = clients[client].naive.revision
            _ = eventually(within: bound) { (try? store.snapshot(of: id).revision) == revision }  // checkTable says what differs
            try checkTable(of: client)
        }
    }

    /// The service of `store`, made on the current menu the first time (before any reload). O(1).
    private func service(of store: any SessionStore) -> MenuAPI {
        if let known = services[ObjectIdentifier(store as AnyObject)] { return known }
        let made = MenuAPI(menu: service.menu, store: store, maxLimit: 100_000)
        services[ObjectIdentifier(store as AnyObject)] = made
        return made
    }

    /// A reload of `count` random edits (``MenuEdits``), installed on every instance (`others`, and
    /// the one serving): each session's compact selection (`GET /session`) must be its twin's
    /// before it; each twin is then carried over by the reload rule by id
    /// (``NaiveSession/reloaded(onto:selection:counted:)``), one revision for a session the service
    /// holds. The tables and the feed entries that follow are checked by the steps after it.
    func reload(edits count: Int, alsoOn others: [any SessionStore] = []) throws {
        var selections: [PortableSelection] = []
        for client in clients.indices {
            guard clients[client].id != nil else {
                selections.append(PortableSelection())
                continue
            }
            let response = send("GET", "/session", client: client)
            let object = response.json["selection"] as? [String: Any]
            guard response.status == 200, let all = object?["all"] as? Bool,
                let toggled = object?["toggled"] as? [String]
            else { throw ServiceDifference(description: "GET /session before a reload answered \(response.json)") }
            let selection = PortableSelection(all: all, toggled: toggled)
            let described = NaiveSession.leaves(of: selection, in: clients[client].naive.menu)
            try expect(
                described == clients[client].naive.selected,
                "GET /session's selection \(selection) chooses \(described.sorted()), the oracle \(clients[client].naive.selected.sorted())"
            )
            selections.append(selection)
        }
        var next = edits
        repeat {
            next = edits
            next.applyRandom(count, using: &rng)
        } while !next.items.contains(where: { $0.children != nil })
        trail.append("reload: \(next.log.suffix(from: edits.log.count).joined(separator: "; "))")
        edits = next
        let menu = try makeMenu(next.items)
        for store in others { _ = self.service(of: store) }
        for other in services.values where other !== service { other.install(menu) }
        service.install(menu)
        version = menu.version
        takeIDs(of: next.items)
        for client in clients.indices {
            let counted = clients[client].id != nil
            let before = clients[client].naive
            clients[client].naive = clients[client].naive.reloaded(
                onto: next.items, selection: selections[client], counted: counted)
            let listing = clients[client].naive.menu.listing()
            clients[client].listing = listing
            let revision = clients[client].naive.revision
            clients[client].listings[revision] = listing
            if counted {
                clients[client].reloadedAt = revision
                clients[client].aroundReload = (before, clients[client].naive)
            }
        }
    }

    // MARK: Steps

    /// One random write by one random client, every read that must follow from it, and now and
    /// then every other client's whole table.
    func step(_ number: Int) throws {
        let client = Int.random(in: clients.indices, using: &rng)
        let command = randomCommand()
        try write(command, by: client)
        try checkTable(of: client)
        for _ in 0 ..< 3 { try checkNode(allIDs.randomElement(using: &rng)!, of: client) }
        for _ in 0 ..< 2 { try checkAnchoredPage(of: client) }
        if number % 4 == 0 { try checkChanges(of: client) }
        if number % 8 == 0 { try checkPortable(of: client) }
        if number % 8 == 4 { try checkFiltered(of: client) }
        if number % 20 == 0 {
            for other in clients.indices where other != client { try checkTable(of: other) }
        }
    }

    func randomCommand() -> SessionCommand {
        let group = groupIDs.randomElement(using: &rng)!
        let expanded = Bool.random(using: &rng)
        let dice = Int.random(in: 0 ..< 100, using: &rng)
        // Now and then a command that must be refused: a row where a group is needed, an id no
        // node has.
        let target =
            switch Int.random(in: 0 ..< 40, using: &rng) {
            case 0 where !rowIDs.isEmpty: rowIDs.randomElement(using: &rng)!
            case 1: group + "-x"
            default: group
            }
        let node = Int.random(in: 0 ..< 40, using: &rng) == 0 ? "no-such-node" : allIDs.randomElement(using: &rng)!
        switch dice {
        case ..<24: return .toggle(groupID: target)
        case ..<38: return .set(groupID: target, isExpanded: expanded)
        case ..<50: return .setSubtree(groupID: target, isExpanded: expanded)
        case ..<56: return .setAll(ExpansionMode.allCases.randomElement(using: &rng)!)
        case ..<72: return .reveal(nodeID: node)
        // Selection at every depth: a leaf, a group, the whole menu (two in three choose).
        case ..<95: return .select(nodeID: node, selected: Int.random(in: 0 ..< 3, using: &rng) > 0)
        default: return .selectAll(Int.random(in: 0 ..< 3, using: &rng) > 0)
        }
    }
}
