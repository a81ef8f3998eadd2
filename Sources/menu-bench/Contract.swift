import Foundation
import HTTPCore
import MenuModel
import MenuService
import MenuSessions
import NaiveReference
import Synchronization

/// `menu-bench --contract`: issue 13's operations through `MenuAPI.respond` (no socket), on
/// the 1.1k and the 1.1M synthetic menus: a 50-row page against its 304; expand all, then a page
/// at a deep offset against the same offset in the default view; the reveal of a hidden deep row;
/// pages `around` and `after` a node; and what a session holds after expand all against after
/// toggles (the state's entries, and the store's resident bytes per session, in a child process).
/// Every request's answer is checked once before it is timed.
enum ContractFigures {
    static func measure(sizes: [MenuSize], sessions: Int, data: String, plan: TimingPlan) throws -> String {
        var table = """
            | menu | request | answer | time |
            |---|---|---:|---:|

            """
        var memory = ""
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        for size in sizes where size != .medium {
            progress("contract: \(size.label): generating and loading")
            let json = SyntheticMenu.json(SyntheticMenu.spec(size), title: "Synthetic \(size.label)")
            let path = data + "/menu-\(size.rawValue).json"
            try Data(json).write(to: URL(fileURLWithPath: path))
            let menu = try Menu(jsonData: Data(json))
            let bench = try ContractBench(menu: menu)
            for figure in try bench.figures(plan: plan) {
                table +=
                    "| \(size.label) | \(figure.request) | \(figure.answer) | \(Report.time(figure.nanoseconds)) |\n"
            }
            if size == sizes.last(where: { $0 != .medium }) {
                memory = try StoreMemory.report(menu: menu, path: path, sessions: sessions, label: size.label)
            }
        }
        return table + "\n" + memory
    }
}

/// One menu served in-process, with a session in the default view and one expanded all.
struct ContractBench {
    let menu: Menu
    let service: MenuAPI
    let defaultSession: [(name: String, value: String)]
    let expandedSession: [(name: String, value: String)]

    init(menu: Menu) throws {
        self.menu = menu
        service = MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu))
        defaultSession = try Self.newSession(on: service)
        expandedSession = try Self.newSession(on: service)
        _ = try Self.expect(200, service.respond(to: Self.setAll(.expanded, expandedSession)), "PUT /expansion")
    }

    /// The headers of a request in a new session.
    static func newSession(on service: MenuAPI) throws -> [(name: String, value: String)] {
        let created = service.respond(to: HTTPRequest(method: "POST", path: "/sessions"))
        guard let id = created.headers.first(where: { $0.name == "X-Session-Id" })?.value else {
            throw BenchError.childFailed("POST /sessions answered \(created.status)")
        }
        return [(name: "Host", value: "127.0.0.1:8080"), (name: "X-Session-Id", value: id)]
    }

    static func setAll(_ mode: ExpansionMode, _ headers: [(name: String, value: String)]) -> HTTPRequest {
        HTTPRequest(
            method: "PUT", path: "/expansion", headers: headers, body: Array("{\"all\":\"\(mode.rawValue)\"}".utf8))
    }

    static func page(_ query: [(String, String)], _ headers: [(name: String, value: String)]) -> HTTPRequest {
        HTTPRequest(method: "GET", path: "/rows", query: query.map { (name: $0.0, value: $0.1) }, headers: headers)
    }

    /// `response` when it has `status`; the body's size as the table shows it.
    static func expect(_ status: Int, _ response: HTTPResponse, _ what: String) throws -> String {
        guard response.status == status else {
            throw BenchError.childFailed(
                "\(what) answered \(response.status): \(String(decoding: response.body, as: UTF8.self).prefix(300))")
        }
        return status == 304 ? "304, no body" : "\(status), \(response.body.count) B"
    }

    struct Figure {
        var request: String
        var answer: String
        var nanoseconds: Double
    }

    /// Times each request set after checking its answers: a call is one of 64 requests, cycled,
    /// or one group of requests (a write and the reset after it), the answer shown the first's.
    func figures(plan: TimingPlan) throws -> [Figure] {
        var figures: [Figure] = []
        func time(_ label: String, groups: [[HTTPRequest]], status: Int = 200) throws {
            var answer = ""
            for group in groups {
                for (position, request) in group.enumerated() {
                    let shown = try Self.expect(status, service.respond(to: request), label)
                    if position == 0 { answer = shown }
                }
            }
            let timed = plan.nanosecondsPerOp { i in
                groups[i % groups.count].reduce(0) { $0 &+ service.respond(to: $1).status }
            }
            figures.append(Figure(request: label, answer: answer, nanoseconds: timed))
        }
        func time(_ label: String, _ requests: [HTTPRequest], status: Int = 200) throws {
            try time(label, groups: requests.map { [$0] }, status: status)
        }
        let defaultView = FlattenedView(menu: menu)
        let expandedView = FlattenedView(menu: menu, state: SessionState(base: .expanded))
        let half = [("offset", String(defaultView.count / 2)), ("limit", "50")]
        let page = service.respond(to: Self.page(half, defaultSession))
        let tag = page.headers.first { $0.name == "ETag" }?.value ?? ""
        try time("GET /rows?offset=\(defaultView.count / 2)&limit=50, default view", [Self.page(half, defaultSession)])
        try time(
            "the same with its If-None-Match",
            [Self.page(half, defaultSession + [(name: "If-None-Match", value: tag)])], status: 304)
        func deep(_ view: FlattenedView) -> [[(String, String)]] {
            (0 ..< 64).map {
                [("offset", String(view.count - 100 - $0 * min(97, (view.count - 100) / 64))), ("limit", "50")]
            }
        }
        try time(
            "GET /rows?offset=count-100…&limit=50 (64 offsets), default view (\(defaultView.count) rows)",
            deep(defaultView).map { Self.page($0, defaultSession) })
        try time(
            "the same after PUT /expansion all expanded (\(expandedView.count) rows)",
            deep(expandedView).map { Self.page($0, expandedSession) })
        let writer = try Self.newSession(on: service)
        try time(
            "PUT /expansion expanded, then collapsed",
            groups: [[Self.setAll(.expanded, writer), Self.setAll(.collapsed, writer)]])
        var rng = SplitMix64(state: 0x13)
        let hidden = menu.nodes.filter { !menu.isGroup($0) && defaultView.index(ofNode: $0) == nil }
        let revealed = (0 ..< 64).map { _ in menu.id(of: hidden.randomElement(using: &rng)!) }
        let depth = defaultView.ancestors(of: menu.node(withID: revealed[0])!).count
        let resets = (0 ..< 64).map { _ in Self.setAll(.default, writer) }
        try time("PUT /expansion default (the reset alone)", resets)
        try time(
            "POST /nodes/{id}/reveal of a hidden row at depth \(depth), then the reset (64 rows)",
            groups: zip(revealed, resets).map {
                [HTTPRequest(method: "POST", path: "/nodes/\($0)/reveal", headers: writer), $1]
            })
        let visible = (0 ..< 64).map { _ in
            var id = ""
            defaultView.forEachVisibleNode(offset: Int.random(in: 0 ..< defaultView.count, using: &rng), limit: 1) {
                id = menu.id(of: $0.node)
            }
            return id
        }
        try time(
            "GET /rows?around={id}&limit=50 (64 visible nodes), default view",
            visible.map { Self.page([("around", $0), ("limit", "50")], defaultSession) })
        try time(
            "GET /rows?after={id}&limit=50 (the same nodes)",
            visible.map { Self.page([("after", $0), ("limit", "50")], defaultSession) })
        return figures
    }
}

/// Resident bytes a session adds to the in-memory store, measured in a child process
/// (`menu-bench --store-memory PATH SESSIONS KIND`) as ``SessionMemory`` measures states: after
/// only its creation, after one expand all, one recursive collapse, or ten toggles.
enum StoreMemory {
    enum Kind: String, CaseIterable {
        case created, expandAll = "expand-all", recursive, toggles = "10-toggles"

        var label: String {
            switch self {
            case .created: "created, no write"
            case .expandAll: "one PUT /expansion all expanded"
            case .recursive: "one recursive collapse of a random group"
            case .toggles: "10 random toggles"
            }
        }

        /// The commands one session gets.
        func commands(groups: [String], using rng: inout SplitMix64) -> [SessionCommand] {
            switch self {
            case .created: []
            case .expandAll: [.setAll(.expanded)]
            case .recursive: [.setSubtree(groupID: groups.randomElement(using: &rng)!, isExpanded: false)]
            case .toggles: (0 ..< 10).map { _ in .toggle(groupID: groups.randomElement(using: &rng)!) }
            }
        }
    }

    /// The table of state entries (one sample session per kind, here) and store bytes per session
    /// (a child process per kind).
    static func report(menu: Menu, path: String, sessions: Int, label: String) throws -> String {
        var rng = SplitMix64(state: 0x5E55)
        let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
        var text = """
            Session memory on the \(label) menu, \(sessions) sessions in the in-memory store (RSS added after malloc_trim, \
            in a child process; the state's entries from one sample session; `SessionState` itself is \
            \(MemoryLayout<SessionState>.size) bytes inline):

            | session | groups + marks | overlay entries | bytes per session |
            |---|---:|---:|---:|

            """
        for kind in Kind.allCases {
            progress("contract: store memory: \(kind.rawValue)")
            var view = FlattenedView(menu: menu)
            for command in kind.commands(groups: groups, using: &rng) {
                switch command {
                case .setAll(let mode): view.setAll(mode)
                case .setSubtree(let id, let expanded): _ = try view.setExpanded(id, expanded, recursive: true)
                case .toggle(let id): _ = try view.toggle(id)
                default: break
                }
            }
            let fields = try BenchChild.run(["--store-memory", path, String(sessions), kind.rawValue], fields: 1)
            guard let bytes = Int(fields[0]) else { throw BenchError.childFailed(fields[0]) }
            text +=
                "| \(kind.label) | \(view.state.changedGroupCount) | \(view.state.overlayEntryCount) | \(bytes / sessions) |\n"
        }
        return text
    }

    /// Loads the menu, then fills a store on a thread of its own (see ``SessionMemory/measureHere(_:sessions:changes:)``
    /// for why) and prints the resident bytes it added.
    static func measureHere(_ path: String, sessions: Int, kind name: String) -> String {
        guard let kind = Kind(rawValue: name) else { return "error: unknown kind \(name)" }
        let menu: Menu
        do {
            menu = try Menu(contentsOfFile: path)
        } catch {
            return "error: \(error)"
        }
        let result = Mutex<String>("")
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var rng = SplitMix64(state: 7)
            let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
            let store = InMemorySessionStore(
                menu: menu, maxSessions: sessions + 1, sessionMemory: SessionLimits.sessionMemoryRange.upperBound)
            let before = ResidentMemory.trimmedRSS()
            do {
                for _ in 0 ..< sessions {
                    let id = try store.create()
                    for command in kind.commands(groups: groups, using: &rng) { _ = try store.apply(command, to: id) }
                }
                let added = withExtendedLifetime(store) { ResidentMemory.trimmedRSS() - before }
                result.withLock { $0 = String(added) }
            } catch {
                result.withLock { $0 = "error: \(error)" }
            }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
}
