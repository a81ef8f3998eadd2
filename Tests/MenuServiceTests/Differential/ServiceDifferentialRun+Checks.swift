import Foundation
import HTTPCore
import MenuAppTestSupport
import MenuModel
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuTestSupport
import NaiveReference

/// The write and the reads of one step, each compared with the client's naive twin.
extension ServiceDifferentialRun {
    /// Sends `command` for `client` (now and then with an `If-Match` of its current revision, which
    /// must go through, or of an older one, which must be refused and change nothing), applies it
    /// to the twin when the service took it, and compares the answer field by field; then replays
    /// the answer's splice onto the rows before it, which must give the rows after it.
    func write(_ command: SessionCommand, by client: Int) throws {
        var headers: [(name: String, value: String)] = []
        let revision = clients[client].naive.revision
        var stale = false
        if clients[client].id != nil {
            switch Int.random(in: 0 ..< 10, using: &rng) {
            case 0: headers.append(("If-Match", tag(revision: revision)))
            case 1 where revision > 0:
                headers.append(("If-Match", tag(revision: Int.random(in: 0 ..< revision, using: &rng))))
                stale = true
            default: break
            }
        }
        trail.append("client \(client) \(command)" + (headers.first.map { " If-Match \($0.value)" } ?? ""))
        if trail.count > 10 { trail.removeFirst() }
        let response = send(command, by: client, headers: headers)
        // A write naming no group (or, for a reveal, no node) is refused as such, old If-Match or
        // not (RFC 9110 §13.2.1: the condition counts only for a request that would succeed).
        let refusal: String? =
            switch command {
            case .reveal(let id): allIDs.contains(id) ? nil : "unknown_node"
            case .toggle(let id), .set(let id, _), .setSubtree(let id, _):
                rowIDs.contains(id) ? "not_a_group" : groupIDs.contains(id) ? nil : "unknown_group"
            case .setAll, .selectAll: nil
            case .select(let id, _, _): allIDs.contains(id) ? nil : "unknown_node"
            }
        if let code = refusal {
            try expect(
                response.errorCode == code && response.status == (code == "not_a_group" ? 409 : 404),
                "a refused write answered \(response.status) \(response.json), not \(code)")
            return
        }
        if stale {
            try expect(
                response.status == 412 && response.errorCode == "precondition_failed"
                    && response.json["revision"] as? Int == revision,
                "a write with an old If-Match answered \(response.status) \(response.json)")
            return
        }
        if let broken = clients[client].naive.selectionRefusal(command) {
            let error = response.json["error"] as? [String: Any]
            try expect(
                response.status == 409 && response.errorCode == "selection_above_maximum"
                    && error?["group"] as? String == broken.group && error?["maxSelect"] as? Int == broken.max
                    && error?["selected"] as? Int == broken.selected,
                "a choice past \(broken.group)'s maxSelect \(broken.max) (\(broken.selected)) answered \(response.status) \(response.json)"
            )
            return
        }
        let before = clients[client].listing
        guard let expected = clients[client].naive.apply(command) else {
            try expect(false, "the oracle refused \(command), which names a group or node it has")
            return
        }
        try expect(response.status == 200, "the write answered \(response.status) \(response.json)")
        let answer = try decode(LiveWrite.self, response, "the write's answer")
        let naive = clients[client].naive
        if let id = clients[client].id {
            try expect(answer.sessionId == id, "the answer names session \(answer.sessionId), not \(id)")
        } else {
            try expect(
                response.header("X-Session-Id") == answer.sessionId,
                "the first write's X-Session-Id is not its sessionId")
            clients[client].id = answer.sessionId
        }
        try expect(
            answer.version == version && answer.revision == naive.revision,
            "the answer is at revision \(answer.revision), the oracle at \(naive.revision)")
        try expect(
            answer.count == naive.menu.count && answer.leafCount == naive.menu.leafCount,
            "the answer counts \(answer.count) rows and \(answer.leafCount) leaves, the oracle \(naive.menu.count) and \(naive.menu.leafCount)"
        )
        let keys = Set(response.json.keys)
        let common: Set<String> = ["version", "revision", "sessionId", "count", "leafCount", "change"]
        switch expected {
        case .group(let change):
            try expect(keys == common.union(["id", "isExpanded", "index"]), "the answer has keys \(keys.sorted())")
            try expect(
                answer.id == change.id && answer.isExpanded == change.isExpanded && answer.index == change.index
                    && answer.all == nil,
                "the answer says \(answer.id ?? "-") \(answer.isExpanded.map(String.init) ?? "-") at \(answer.index.map(String.init) ?? "null"), the oracle \(change)"
            )
        case .all(let reset):
            try expect(keys == common.union(["all"]), "the reset's answer has keys \(keys.sorted())")
            try expect(
                answer.all == reset.mode.rawValue && answer.id == nil,
                "the reset's answer says all \(answer.all ?? "-")")
        case .selection(let change):
            let own: Set<String> =
                change.id == nil
                ? ["selected", "selectedCount", "reconfigured"] : ["id", "selected", "selectedCount", "reconfigured"]
            try expect(keys == common.union(own), "the selection's answer has keys \(keys.sorted())")
        }
        try expect(
            answer.change?.rowChange == expected.splice,
            "the answer's splice is \(String(describing: answer.change)), the oracle's \(String(describing: expected.splice))"
        )
        if let problem = naive.mismatch() {
            throw ServiceDifference(description: "the oracle disagrees with itself: \(problem)")
        }
        let after = naive.menu.listing()
        clients[client].listing = after
        clients[client].listings[naive.revision] = after
        clients[client].listings = clients[client].listings.filter { $0.key >= naive.revision - history - 2 }
        if let problem = replayProblem([answer.change?.rowChange], onto: before, reaching: after) {
            throw ServiceDifference(description: "the answer's splice replayed onto the rows before it: \(problem)")
        }
    }

    /// The whole table of `client` in one page (every field of every row, the page's keys, counts
    /// and revision), its `ETag`, and `/count` revalidated with the tag of its previous read:
    /// 304 exactly when the revision did not move, else the same counts and tag.
    func checkTable(of client: Int) throws {
        let naive = clients[client].naive
        let response = send("GET", "/rows", query: [("limit", "100000")], client: client)
        try expect(response.status == 200, "GET /rows answered \(response.status) \(response.json)")
        let page = try decode(LiveRowsPage.self, response, "GET /rows")
        try expect(
            page.keys == LiveRowsPage.pageKeys && page.version == version && page.offset == 0 && page.limit == 100_000,
            "GET /rows answered keys \(page.keys.sorted()), offset \(page.offset), limit \(page.limit)")
        try expect(
            page.revision == naive.revision,
            "GET /rows is at revision \(page.revision), the oracle at \(naive.revision)")
        try expect(
            page.count == naive.menu.count && page.leafCount == naive.menu.leafCount,
            "GET /rows counts \(page.count) rows and \(page.leafCount) leaves, the oracle \(naive.menu.count) and \(naive.menu.leafCount)"
        )
        try compare(page.rows, clients[client].listing[...], "GET /rows", client: client)
        let tag = tag(revision: naive.revision)
        try expect(
            response.header("ETag") == tag, "GET /rows sent ETag \(response.header("ETag") ?? "none"), not \(tag)")
        if let previous = clients[client].tag {
            let count = send("GET", "/count", client: client, headers: [("If-None-Match", previous)])
            try expect(
                count.header("ETag") == tag, "GET /count sent ETag \(count.header("ETag") ?? "none"), not \(tag)")
            if previous == tag {
                try expect(
                    count.status == 304 && count.body.isEmpty,
                    "GET /count with the current tag answered \(count.status)")
            } else {
                try expect(count.status == 200, "GET /count with an old tag answered \(count.status)")
                let counts = try decode(LiveCount.self, count, "GET /count")
                try expect(
                    counts
                        == LiveCount(
                            version: version, revision: naive.revision, count: naive.menu.count,
                            leafCount: naive.menu.leafCount),
                    "GET /count answered \(counts)")
            }
        }
        clients[client].tag = tag
    }

    /// `rows` must be the oracle's `expected` with `client`'s selection, field for field and key for key.
    func compare(_ rows: [LiveRow], _ expected: ArraySlice<NaiveRow>, _ what: String, client: Int) throws {
        try expect(rows.count == expected.count, "\(what) has \(rows.count) rows, the oracle \(expected.count)")
        for (row, naive) in zip(rows, expected) {
            let oracle = LiveRow(naive, selection: clients[client].naive.selection(of: naive.id))
            guard row == oracle else {
                throw ServiceDifference(description: "\(what): row \(row), the oracle's \(oracle)")
            }
        }
    }

    /// `GET /nodes/{id}`: the node's row and index when visible (null when hidden), its path.
    func checkNode(_ id: String, of client: Int) throws {
        let naive = clients[client].naive.menu
        let response = send("GET", "/nodes/\(id)", client: client)
        try expect(response.status == 200, "GET /nodes/\(id) answered \(response.status)")
        let node = try decode(LiveNode.self, response, "GET /nodes/\(id)")
        let index = naive.index(of: id)
        try expect(
            node.id == id && node.index == index && node.path == naive.path(of: id),
            "GET /nodes/\(id) says index \(node.index.map(String.init) ?? "null") path \(node.path), the oracle \(index.map(String.init) ?? "null") \(naive.path(of: id) ?? [])"
        )
        try expect(
            node.row
                == index.map {
                    LiveRow(
                        clients[client].listing[$0],
                        selection: clients[client].naive.selection(of: clients[client].listing[$0].id))
                },
            "GET /nodes/\(id) answered row \(node.row.map(String.init(describing:)) ?? "null")")
    }

    /// A page `after`, `before` or `around` a random node, against the oracle's slice (409
    /// `not_visible` with the node's path when the node is hidden).
    func checkAnchoredPage(of client: Int) throws {
        let id = allIDs.randomElement(using: &rng)!
        let anchor = ["after", "before", "around"].randomElement(using: &rng)!
        let limit = Int.random(in: 1 ... 9, using: &rng)
        let target = "/rows?\(anchor)=\(id)&limit=\(limit)"
        let response = send("GET", "/rows", query: [(anchor, id), ("limit", String(limit))], client: client)
        let rows = clients[client].listing
        guard let index = clients[client].naive.menu.index(of: id) else {
            let path = (response.json["error"] as? [String: Any])?["path"] as? [String]
            try expect(
                response.status == 409 && response.errorCode == "not_visible"
                    && path == clients[client].naive.menu.path(of: id),
                "\(target) of a hidden node answered \(response.status) \(response.json)")
            return
        }
        try expect(response.status == 200, "\(target) answered \(response.status) \(response.json)")
        let page = try decode(LiveRowsPage.self, response, target)
        let (offset, end) =
            switch anchor {
            case "after": (index + 1, index + 1 + limit)
            case "before": (max(0, index - limit), index)
            default:
                (
                    max(0, min(index - limit / 2, rows.count - limit)),
                    max(0, min(index - limit / 2, rows.count - limit)) + limit
                )
            }
        try expect(
            page.offset == offset && page.limit == limit && page.revision == clients[client].naive.revision,
            "\(target) starts at \(page.offset), the oracle's at \(offset)")
        try compare(page.rows, rows[min(offset, rows.count) ..< min(end, rows.count)], target, client: client)
    }

    /// `GET /changes?since=R` for a random `R` the history still reaches (or just no longer
    /// reaches: 410 `gone`), not before the last reload's entry: one entry per revision since `R`,
    /// each the oracle's splice, and the entries replayed onto the rows of revision `R` give the
    /// rows of now. A reload's entry, replayed with the rows it inserts and reconfigures taken from
    /// the rows after it, must give those rows: every row it leaves alone is unchanged in every
    /// field, selection included.
    func checkChanges(of client: Int) throws {
        let naive = clients[client].naive
        let reload = clients[client].reloadedAt
        let lowest = max(0, naive.revision - history - 2, (reload ?? 0) - 1)
        let since = Int.random(in: lowest ... naive.revision, using: &rng)
        let response = send("GET", "/changes", query: [("since", String(since))], client: client)
        guard since >= naive.revision - history else {
            try expect(
                response.status == 410 && response.errorCode == "gone",
                "/changes?since=\(since) at revision \(naive.revision), history \(history), answered \(response.status)"
            )
            return
        }
        try expect(response.status == 200, "/changes?since=\(since) answered \(response.status) \(response.json)")
        let changes = try decode(LiveChanges.self, response, "/changes?since=\(since)")
        try expect(
            changes.version == version && changes.revision == naive.revision
                && changes.changes.map(\.revision) == Array(since + 1 ..< naive.revision + 1),
            "/changes?since=\(since) answered revision \(changes.revision) and entries \(changes.changes.map(\.revision))"
        )
        let splices = changes.changes.map { $0.change?.rowChange }
        try expect(
            splices == Array(naive.log[since...]),
            "/changes?since=\(since) answered \(splices), the oracle's log \(Array(naive.log[since...]))")
        try expect(
            changes.changes.allSatisfy { ($0.reload != nil) == ($0.revision == reload) },
            "/changes?since=\(since) has reload entries at \(changes.changes.filter { $0.reload != nil }.map(\.revision)), the reload is at \(reload.map(String.init) ?? "none")"
        )
        guard var old = clients[client].listings[since] else {
            throw ServiceDifference(description: "no listing kept for revision \(since)")
        }
        var splicesAfter = splices[...]
        if let entry = changes.changes.first?.reload, let reload, let reloaded = clients[client].listings[reload],
            let (before, after) = clients[client].aroundReload
        {
            try expect(entry.version == version, "the reload's entry names version \(entry.version), not \(version)")
            // Each row with the session it is read from: the twin before the reload, or after it.
            var rows = old.map { (row: $0, twin: before) }
            for change in entry.changes {
                try expect(
                    change.at >= 0 && change.at + change.removed <= rows.count
                        && change.at + change.inserted <= reloaded.count,
                    "the reload's splice \(change) does not fit \(rows.count) rows before, \(reloaded.count) after")
                rows.replaceSubrange(
                    change.at ..< change.at + change.removed,
                    with: reloaded[change.at ..< change.at + change.inserted].map { ($0, after) })
            }
            for index in entry.reconfigured {
                try expect(index >= 0 && index < rows.count, "the reload reconfigures row \(index) of \(rows.count)")
                rows[index] = (reloaded[index], after)
            }
            try expect(
                rows.count == reloaded.count, "the reload's entry leaves \(rows.count) rows, not \(reloaded.count)")
            for (index, (row, twin)) in rows.enumerated() {
                var replayed = LiveRow(row, selection: twin.selection(of: row.id))
                replayed.index = index  // a row's index is its place, which the splices moved
                let expected = LiveRow(reloaded[index], selection: after.selection(of: reloaded[index].id))
                try expect(
                    replayed == expected,
                    "the reload's entry \(entry) replayed leaves row \(index) as \(replayed), not \(expected)")
            }
            old = reloaded
            splicesAfter = splicesAfter.dropFirst()
        }
        if let problem = replayProblem(Array(splicesAfter), onto: old, reaching: clients[client].listing) {
            throw ServiceDifference(
                description: "/changes?since=\(since) replayed onto the rows of revision \(since): \(problem)")
        }
    }
}

extension ServiceDifferentialRun {
    /// `GET /session`: the state by id must be the oracle's record (base; marks and flips
    /// in menu order, each flip under the state it gives), with the session's revision and tag;
    /// posted back to `POST /sessions` it must make a session (revision 0, nothing ignored) whose
    /// whole table is this one's.
    func checkPortable(of client: Int) throws {
        guard let id = clients[client].id else { return }
        let naive = clients[client].naive
        let response = send("GET", "/session", client: client)
        try expect(
            response.status == 200 && response.header("ETag") == tag(revision: naive.revision),
            "GET /session of \(id) answered \(response.status), ETag \(response.header("ETag") ?? "none")")
        let portable = try decode(LivePortable.self, response, "GET /session of \(id)")
        let groups = naive.menu.preorder().filter(\.isGroup)
        let record = naive.record
        let expected = LivePortable.Expansion(
            base: record.base.rawValue,
            marks: groups.compactMap { group in
                record.marks[group.id].map { LivePortable.Mark(id: group.id, mode: $0.rawValue) }
            },
            expanded: groups.filter { record.flips.contains($0.id) && $0.isExpand }.map(\.id),
            collapsed: groups.filter { record.flips.contains($0.id) && !$0.isExpand }.map(\.id))
        try expect(
            portable.sessionId == id && portable.revision == naive.revision && portable.version == version,
            "GET /session of \(id) names session \(portable.sessionId) at revision \(portable.revision)")
        try expect(
            portable.expansion == expected,
            "GET /session of \(id) answered \(portable.expansion), the oracle's \(expected)")
        guard var object = response.json["expansion"] as? [String: Any], let selection = response.json["selection"]
        else {
            throw ServiceDifference(description: "GET /session of \(id) has no expansion or selection object")
        }
        object["selection"] = selection  // the state is expansion and selection: the copy takes both
        guard let body = try? JSONSerialization.data(withJSONObject: object) else {
            throw ServiceDifference(description: "GET /session of \(id) does not write back")
        }
        let created = service.respond(to: HTTPRequest(method: "POST", path: "/sessions", body: Array(body)))
        try expect(
            created.status == 201 && created.json["revision"] as? Int == 0
                && (created.json["ignored"] as? [Any])?.isEmpty == true,
            "POST /sessions with the expansion answered \(created.status) \(created.json)")
        guard let copy = created.header("X-Session-Id") else {
            throw ServiceDifference(description: "POST /sessions sent no X-Session-Id")
        }
        let rows = service.respond(
            to: HTTPRequest(
                method: "GET", path: "/rows", query: [(name: "limit", value: "100000")],
                headers: [("X-Session-Id", copy)]))
        let page = try decode(LiveRowsPage.self, rows, "GET /rows of the session made from the expansion")
        try expect(page.revision == 0, "the session made from the expansion is at revision \(page.revision)")
        try compare(
            page.rows, clients[client].listing[...], "GET /rows of the session made from the expansion", client: client)
        try expect(
            service.respond(to: HTTPRequest(method: "DELETE", path: "/session", headers: [("X-Session-Id", copy)]))
                .status == 204, "DELETE of the copy failed")
    }
}

extension ServiceDifferentialRun {
    /// `GET /rows?q=` for a random number in the titles: the rows are the oracle's matches and
    /// their ancestors in menu order, every field of every row as the contract gives a filtered
    /// view (a group open exactly when something inside it is shown, its shown descendants, the
    /// place among the siblings shown), and each carries the session's selection as in its own
    /// tree (a group's counts over all its leaves, shown or not).
    func checkFiltered(of client: Int) throws {
        let query = String(Int.random(in: 1 ... 40, using: &rng))
        let response = send("GET", "/rows", query: [("q", query), ("limit", "100000")], client: client)
        try expect(response.status == 200, "GET /rows?q=\(query) answered \(response.status) \(response.json)")
        let page = try decode(LiveRowsPage.self, response, "GET /rows?q=\(query)")
        let naive = clients[client].naive
        var expected: [LiveRow] = []
        /// Appends `item`'s row and its shown descendants' when it or one of them matches; returns
        /// how many rows that was.
        func show(_ item: NaiveMenuItem, place: Int, of setSize: Int) -> Int {
            let at = expected.count
            let below = item.children.filter { Self.shows($0, query) }
            var shown = 0
            expected.append(
                LiveRow(
                    index: at, id: item.id, title: item.title, depth: item.depth, isGroup: item.isGroup,
                    isExpanded: item.isGroup ? !below.isEmpty : nil,
                    childCount: item.isGroup ? item.children.count : nil,
                    attributes: item.attributes?.mapValues(LiveJSON.init),
                    parentId: item.parent.flatMap { $0.parent == nil ? nil : $0.id }, visibleDescendantCount: nil,
                    posInSet: place, setSize: setSize, selected: naive.selection(of: item.id).selected,
                    selectedCount: naive.selection(of: item.id).count,
                    selectableCount: item.isGroup ? NaiveSession.leafIDs(under: item).count : nil))
            for (index, child) in below.enumerated() { shown += show(child, place: index + 1, of: below.count) }
            if item.isGroup { expected[at].visibleDescendantCount = shown }
            return shown + 1
        }
        let top = naive.menu.root.children.filter { Self.shows($0, query) }
        for (index, item) in top.enumerated() { _ = show(item, place: index + 1, of: top.count) }
        try expect(
            page.count == expected.count && page.rows.count == expected.count,
            "GET /rows?q=\(query) has \(page.count) rows, the oracle \(expected.count)")
        for (row, oracle) in zip(page.rows, expected) where row != oracle {
            throw ServiceDifference(description: "GET /rows?q=\(query): row \(row), the oracle's \(oracle)")
        }
    }

    /// Whether a search for `query` (digits: no folding matters) shows `item`: its title has it, or
    /// a descendant's does.
    static func shows(_ item: NaiveMenuItem, _ query: String) -> Bool {
        item.title.contains(query) || item.children.contains { shows($0, query) }
    }
}
