import DurableTestSupport
import Foundation
import HTTPCore
import MenuAvailability
import MenuModel
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuSessionsDurable
import MenuSessionsRedis
import NaiveReference
import RedisTestSupport
import Testing

/// `"whenUnavailable": "hide"` as sessions read it, on each session store, against a reference
/// that applies the rules node by node on the config's tree: random menus with `hide` (and
/// `show` again below some) on random nodes, sessions toggling random groups, random admin
/// batches selling out, pausing and clearing leaves and groups. After each batch every session's
/// rows (id, depth, childCount, posInSet, setSize), count and search are those of the tree
/// without the hidden subtrees, in the session's expansion (a hidden group's own choice dropped,
/// as at a reload); and the rows held from before the batch, taken through the feed's entries,
/// are the rows read fresh.
@Suite struct HiddenWhenUnavailableDifferentialTests {
    typealias Store = DifferentialStore

    /// A node of the config as the reference sees it.
    final class Node {
        let id: String
        let children: [Node]?
        let expandedByDefault: Bool
        /// `whenUnavailable` as inherited: true for hide.
        let hides: Bool
        weak var parent: Node?

        init(_ object: [String: Any], inheritedHide: Bool) {
            id = object["id"] as! String
            expandedByDefault = object["expanded"] as? Bool ?? false
            hides = (object["whenUnavailable"] as? String).map { $0 == "hide" } ?? inheritedHide
            let hides = hides
            children = (object["items"] as? [[String: Any]])?.map { Node($0, inheritedHide: hides) }
            for child in children ?? [] { child.parent = self }
        }

        var isGroup: Bool { children != nil }
        var subtree: [Node] { [self] + (children ?? []).flatMap(\.subtree) }
        var leaves: [Node] { subtree.filter { !$0.isGroup } }
    }

    /// The reference's row: what `/rows` answers of it.
    struct Row: Equatable, CustomStringConvertible {
        var id: String
        var depth: Int
        var childCount: Int?
        var posInSet: Int
        var setSize: Int
        var description: String { "\(id)@\(depth) \(childCount.map(String.init) ?? "-") \(posInSet)/\(setSize)" }
    }

    /// `items` with `whenUnavailable` on about one node in five (`hide`, or `show` under a hiding group).
    static func marked(_ items: [[String: Any]], hiding: Bool, using rng: inout SplitMix64) -> [[String: Any]] {
        items.map { item in
            var item = item
            var hides = hiding
            switch Int.random(in: 0 ..< 10, using: &rng) {
            case 0, 1:
                item["whenUnavailable"] = "hide"
                hides = true
            case 2 where hiding:
                item["whenUnavailable"] = "show"
                hides = false
            default: break
            }
            if let children = item["items"] as? [[String: Any]] {
                item["items"] = marked(children, hiding: hides, using: &rng)
            }
            return item
        }
    }

    @Test(arguments: Store.allCases)
    func everySessionsRowsFeedCountAndSearchFollowTheReference(store: Store) throws {
        var rng = SplitMix64(state: 0x41DE ^ UInt64(store.rawValue.utf8.count))
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let redis = store == .redis ? try RedisServerProcess() : nil
        defer { redis?.stop() }
        var checked = (rows: 0, hiddenSteps: 0, spliced: 0)
        for round in 0 ..< 4 {
            let spec = randomTree(nodes: Int.random(in: 20 ... 60, using: &rng), maxDepth: 3, using: &rng)
            let parsed = try JSONSerialization.jsonObject(with: menuJSON(spec)) as! [String: Any]
            let items = Self.marked(parsed["items"] as! [[String: Any]], hiding: false, using: &rng)
            let json = try JSONSerialization.data(withJSONObject: ["items": items])
            let menu = try Menu(jsonData: json)
            let roots = items.map { Node($0, inheritedHide: false) }
            let all = roots.flatMap(\.subtree)
            let context = "\(store) round \(round), \(String(decoding: json, as: UTF8.self))"

            let (sessions, close) = try store.make(on: menu, round: round, in: directory, redis: redis, prefix: "hide")
            defer { close() }
            let now = Timestamp(milliseconds: 1_800_000_000_000)
            let service = MenuAPI(store: sessions, maxLimit: 500, clock: { now })

            // The reference: the admin entries by id, and each session's expanded groups.
            var entries: [String: String] = [:]
            func hasEntry(_ node: Node) -> Bool {
                var at: Node? = node
                while let here = at {
                    if entries[here.id] != nil { return true }
                    at = here.parent
                }
                return false
            }
            func unavailable(_ node: Node) -> Bool {
                if hasEntry(node) { return true }
                let leaves = node.leaves
                return node.isGroup && !leaves.isEmpty && leaves.allSatisfy(hasEntry)
            }
            func hidden() -> Set<String> {
                var found: Set<String> = []
                func walk(_ node: Node) {
                    if node.hides && unavailable(node) {
                        found.formUnion(node.subtree.map(\.id))
                        return
                    }
                    for child in node.children ?? [] { walk(child) }
                }
                for root in roots { walk(root) }
                return found
            }
            func rows(expanded: Set<String>, hidden: Set<String>) -> [Row] {
                var rows: [Row] = []
                func walk(_ nodes: [Node], depth: Int) {
                    let shown = nodes.filter { !hidden.contains($0.id) }
                    for (index, node) in shown.enumerated() {
                        rows.append(
                            Row(
                                id: node.id, depth: depth,
                                childCount: node.children.map { $0.filter { !hidden.contains($0.id) }.count },
                                posInSet: index + 1, setSize: shown.count))
                        if let children = node.children, expanded.contains(node.id) {
                            walk(children, depth: depth + 1)
                        }
                    }
                }
                walk(roots, depth: 0)
                return rows
            }
            let defaults = Set(all.filter { $0.isGroup && $0.expandedByDefault }.map(\.id))

            var ids: [String] = []
            var expanded: [Set<String>] = []
            for _ in 0 ..< 3 {
                ids.append(try #require(service.call("POST", "/sessions").json["sessionId"] as? String))
                expanded.append(defaults)
            }
            func served(_ session: String) throws -> (rows: [Row], revision: Int, count: Int) {
                let page = service.call("GET", "/rows", query: [("limit", "500")], session: session)
                try #require(page.status == 200, "\(page.json)")
                let rows = (page.json["rows"] as? [[String: Any]] ?? []).map {
                    Row(
                        id: $0["id"] as! String, depth: $0["depth"] as! Int, childCount: $0["childCount"] as? Int,
                        posInSet: $0["posInSet"] as! Int, setSize: $0["setSize"] as! Int)
                }
                return (rows, try #require(page.json["revision"] as? Int), page.json["count"] as? Int ?? -1)
            }

            var held = try ids.map { try served($0) }
            for step in 0 ..< 10 {
                // A batch on one to three random nodes (a group's entry reaches all under it).
                var batch: [AvailabilityOverlay.Change] = []
                for node in all.shuffled(using: &rng).prefix(Int.random(in: 1 ... 3, using: &rng)) {
                    let state: AvailabilityState = [.soldOut, .paused, .available, .available].randomElement(
                        using: &rng)!
                    batch.append(.init(id: node.id, Availability(state: state)))
                    entries[node.id] = state == .available ? nil : "\(state)"
                }
                _ = try service.updateAvailability(batch, now: now)
                let gone = hidden()
                if !gone.isEmpty { checked.hiddenSteps += 1 }
                let label = "step \(step), hidden \(gone.sorted()); \(context)"

                for (index, session) in ids.enumerated() {
                    // A hidden group's own choice is dropped, as a removed id's at a reload.
                    for group in gone where expanded[index].contains(group) != defaults.contains(group) {
                        expanded[index].formSymmetricDifference([group])
                    }
                    let fresh = try served(session)
                    let reference = rows(expanded: expanded[index], hidden: gone)
                    #expect(fresh.rows == reference, "session \(index): \(label)")
                    #expect(fresh.count == reference.count, "session \(index): \(label)")
                    checked.rows += reference.count
                    let leaves = all.filter { !$0.isGroup && !gone.contains($0.id) }.count
                    let search = service.call("GET", "/search", query: [("q", "Row")], session: session)
                    #expect(search.json["total"] as? Int == leaves, "search, session \(index): \(label)")

                    // The rows held from before the batch, through the feed.
                    let feed = service.call(
                        "GET", "/changes", query: [("since", "\(held[index].revision)")], session: session)
                    try #require(feed.status == 200, "\(feed.json); \(label)")
                    var table: [String?] = held[index].rows.map(\.id)
                    for entry in feed.json["changes"] as? [[String: Any]] ?? [] {
                        let reload = try #require(entry["reload"] as? [String: Any], "\(entry); \(label)")
                        for splice in reload["changes"] as? [[String: Int]] ?? [] {
                            let (at, removed, inserted) = (splice["at"]!, splice["removed"]!, splice["inserted"]!)
                            try #require(at + removed <= table.count, "\(splice) past \(table.count); \(label)")
                            table.replaceSubrange(at ..< at + removed, with: repeatElement(nil, count: inserted))
                            checked.spliced += 1
                        }
                        for row in reload["reconfigured"] as? [Int] ?? [] where row < table.count { table[row] = nil }
                    }
                    #expect(table.count == fresh.rows.count, "feed length, session \(index): \(label)")
                    for (mine, theirs) in zip(table, fresh.rows) where mine != nil {
                        #expect(mine == theirs.id, "feed row, session \(index): \(label)")
                    }

                    // A toggle of a random group that shows, or a 404 for one that hides.
                    if let group = all.filter(\.isGroup).randomElement(using: &rng) {
                        let toggled = service.call("POST", "/groups/\(group.id)/toggle", session: session)
                        if gone.contains(group.id) {
                            #expect(toggled.status == 404 && toggled.errorCode == "unknown_group", "\(label)")
                        } else {
                            #expect(toggled.status == 200, "\(toggled.json); \(label)")
                            expanded[index].formSymmetricDifference([group.id])
                        }
                    }
                    held[index] = try served(session)
                    #expect(
                        held[index].rows == rows(expanded: expanded[index], hidden: gone), "after a toggle: \(label)")
                }
            }
        }
        print("HiddenWhenUnavailableDifferentialTests (\(store)): \(checked)")
        #expect(checked.rows >= 1_000 && checked.hiddenSteps >= 20 && checked.spliced >= 8, "\(checked)")
    }
}
