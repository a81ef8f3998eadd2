import Foundation
import Testing

@testable import MenuModel

/// The flattened view must agree with the seeds' naive recursive walk (``NaiveMenu``) on every
/// field of every row after every step, on menus of four shapes: small narrow trees, groups of
/// hundreds and thousands of children (where the sibling searches and running sums work), chains
/// down to the 64-level limit, and one large menu of 100,000 nodes (with fewer steps). Each step
/// changes one of several independent views (a toggle, a PUT, or a change the model must refuse:
/// an unknown id or a row's id), with targets chosen from the oracle, never from the view under
/// test; then every row is compared, pages are read at and past the end, and ids are looked up.
///
/// Seeds are random on each run and printed with every failure; set `MENU_DIFFERENTIAL_SEED` to
/// replay one.
@Suite struct DifferentialTests {
    /// A kind of menu, how many steps to run on it and how many independent views to change.
    struct Shape: Sendable, CustomTestStringConvertible {
        var name: String
        var runs: Int
        var steps: Int
        var sessions: Int
        var make: @Sendable (inout SplitMix64) -> [TreeSpec]
        var testDescription: String { name }
    }

    static let shapes: [Shape] = [
        Shape(name: "narrow trees of 150 nodes", runs: 6, steps: 250, sessions: 3) {
            randomTree(nodes: 150, maxDepth: 5, using: &$0)
        },
        Shape(name: "groups of hundreds and thousands of children", runs: 1, steps: 40, sessions: 2, make: wideTree),
        Shape(name: "chains down to the 64-level limit", runs: 2, steps: 250, sessions: 2, make: deepChains),
        Shape(name: "one menu of 100,000 nodes", runs: 1, steps: 8, sessions: 2, make: largeTree)
    ]

    static let baseSeed: UInt64 =
        ProcessInfo.processInfo.environment["MENU_DIFFERENTIAL_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0 ... UInt64.max)

    /// Four groups of 300, 1,000, 3,000 and 100 to 2,000 children; one child in eight is a group of
    /// up to 24 rows, one in 64 of those holds a group of its own.
    @Sendable static func wideTree(using rng: inout SplitMix64) -> [TreeSpec] {
        var counter = 0
        func row() -> TreeSpec {
            counter += 1
            return .row(
                "n\(counter)", "Row \(counter)", attributes: counter % 5 == 0 ? ["n": .integer(Int64(counter))] : nil)
        }
        func group(_ children: [TreeSpec], expanded: Bool) -> TreeSpec {
            counter += 1
            return .group("n\(counter)", "Group \(counter)", expanded: expanded, children)
        }
        return [300, 1_000, 3_000, Int.random(in: 100 ... 2_000, using: &rng)].map { size in
            let children = (0 ..< size).map { _ -> TreeSpec in
                guard Int.random(in: 0 ..< 8, using: &rng) == 0 else { return row() }
                var inner = (0 ..< Int.random(in: 0 ... 24, using: &rng)).map { _ in row() }
                if Int.random(in: 0 ..< 64, using: &rng) == 0 {
                    inner.append(group((0 ..< 5).map { _ in row() }, expanded: Bool.random(using: &rng)))
                }
                return group(inner, expanded: Bool.random(using: &rng))
            }
            return group(children, expanded: Int.random(in: 0 ..< 4, using: &rng) != 0)
        }
    }

    /// 100 top-level groups (four in five expanded) of a random tree of 1,000 nodes each.
    @Sendable static func largeTree(using rng: inout SplitMix64) -> [TreeSpec] {
        (0 ..< 100).map { top in
            .group(
                "top\(top)", expanded: top % 5 != 0,
                randomTree(nodes: 999, maxDepth: 6, width: 0 ... 12, idPrefix: "t\(top)-", using: &rng))
        }
    }

    /// `chains` chains (three for the random steps) of groups at depths 0 through 63 (the deepest
    /// level a config may have), nine in ten links expanded (or all of them), each level with a
    /// few rows and small groups beside the chain.
    @Sendable static func deepChains(using rng: inout SplitMix64) -> [TreeSpec] {
        deepChains(3, allExpanded: false, using: &rng)
    }

    static func deepChains(_ chains: Int, allExpanded: Bool, using rng: inout SplitMix64) -> [TreeSpec] {
        var counter = 0
        func next() -> Int {
            counter += 1
            return counter
        }
        let last = MenuBuilder.depthLimit - 1
        func siblings(depth: Int) -> [TreeSpec] {
            (0 ..< Int.random(in: 0 ... 2, using: &rng)).map { _ in
                let id = next()
                return depth == last || Bool.random(using: &rng)
                    ? .row("n\(id)")
                    : .group("n\(id)", expanded: Bool.random(using: &rng), [.row("n\(next())"), .row("n\(next())")])
            }
        }
        func chain(depth: Int) -> [TreeSpec] {
            let id = next()
            let link: TreeSpec =
                depth == last
                ? .group("n\(id)", expanded: false, [])  // a group at the last level can only be empty
                : .group(
                    "n\(id)", expanded: allExpanded || Int.random(in: 0 ..< 10, using: &rng) != 0,
                    chain(depth: depth + 1)
                )
            return siblings(depth: depth) + [link] + siblings(depth: depth)
        }
        return (0 ..< chains).flatMap { _ in chain(depth: 0) }
    }

    /// Ids no node has, next to real ones: empty, a prefix, a suffix, another case, too long.
    static func unknownIDs(near id: String) -> [String] {
        ["", "n0", String(id.dropLast()), id + "0", id + "-x", id.uppercased(), String(repeating: "n", count: 129)]
    }

    /// Field-by-field equality of a view's row and the oracle's row `index`.
    static func same(_ row: FlattenedRow, _ index: Int, _ item: NaiveMenuItem) -> Bool {
        row.index == index && row.id == item.id && row.title == item.title && row.depth == item.depth
            && row.isGroup == item.isGroup && row.isExpanded == (item.isGroup ? item.isExpand : nil)
            && row.childCount == (item.isGroup ? item.children.count : nil) && row.attributes == item.attributes
            && row.parentID == (item.parent?.parent == nil ? nil : item.parent?.id)
            && row.visibleDescendantCount == item.visibleDescendantCount()
    }

    /// The oracle's whole table, and the row of each node (by the items' ordinals, which are the
    /// menu's node numbers: both count in document order, checked by ``differenceInNodes``).
    struct Table {
        var rows: [(index: Int, item: NaiveMenuItem)]
        var leafCount: Int
        var rowOfNode: [Int?]
        /// The oracle's ancestor path of each id in `probes` (nil for an unknown id): checked for
        /// the ids it holds.
        var paths: [String: [String]?] = [:]
        init(_ naive: NaiveMenu, nodeCount: Int, probes: [String] = []) {
            for id in probes { paths[id] = naive.path(of: id) }
            rows = naive.flattened()
            leafCount = naive.leafCount
            rowOfNode = Array(repeating: nil, count: nodeCount + 1)
            for (index, item) in rows { rowOfNode[item.ordinal] = index }
        }
    }

    /// What differs between the menu's nodes and the oracle's items in document order (nil:
    /// nothing): every field a row shows that does not depend on the session.
    static func differenceInNodes(_ menu: Menu, _ items: [NaiveMenuItem]) -> String? {
        guard menu.nodes.count == items.count else { return "\(menu.nodes.count) nodes, oracle \(items.count)" }
        for (node, item) in zip(menu.nodes, items) {
            let isGroup = menu.isGroup(node)
            if item.ordinal != node || menu.id(of: node) != item.id || menu.title(of: node) != item.title
                || menu.depth(of: node) != item.depth
                || isGroup != item.isGroup
                || (isGroup ? menu.childCount(of: node) : item.children.count) != item.children.count
                || menu.attributes(of: node) != item.attributes
                || (isGroup && menu.isExpandedByDefault(node) != item.isExpand)
            {
                return "node \(node) (\(menu.id(of: node))) differs from the oracle's \(item.id)"
            }
        }
        return nil
    }

    /// What differs between `view` and the oracle's `table` (nil: nothing): the counts; every
    /// visible row's position, node and expansion; when `wholeRows`, every field of every row; when
    /// `eachRowAlone`, every row read as a page of its own (which starts with the search for that
    /// row's node, the walk that finds every later row of a page);
    /// pages at, near and past the end (every field, and `visibleNodes`); and the row of every id
    /// in `probes` (nil for hidden and unknown ids; `nodeOfID` is the oracle's id → ordinal).
    static func difference(
        _ view: FlattenedView, _ table: Table, nodeOfID: [String: Int], wholeRows: Bool,
        eachRowAlone: Bool, probes: [String], using rng: inout SplitMix64
    ) -> String? {
        let expected = table.rows
        let count = expected.count
        if view.count != count || view.leafCount != table.leafCount {
            return "counts \(view.count)/\(view.leafCount), oracle \(count)/\(table.leafCount)"
        }
        func sameNodes(_ nodes: [VisibleNode], _ wanted: ArraySlice<(index: Int, item: NaiveMenuItem)>) -> Bool {
            nodes.count == wanted.count
                && zip(nodes, wanted).allSatisfy {
                    $0.index == $1.index && $0.node == $1.item.ordinal
                        && $0.isExpanded == ($1.item.isGroup && $1.item.isExpand)
                }
        }
        if !sameNodes(view.visibleNodes(offset: 0, limit: count + 1), expected[...]) {
            return "visibleNodes(0, \(count + 1)) differs from the oracle's table"
        }
        if wholeRows {
            let all = view.rows(offset: 0, limit: count + 1)
            if all.count != count { return "rows(0, \(count + 1)) gave \(all.count) rows, oracle \(count)" }
            for (row, reference) in zip(all, expected) where !same(row, reference.index, reference.item) {
                return
                    "row \(reference.index): \(row), oracle \(reference.item.id) depth \(reference.item.depth) expanded \(reference.item.isExpand)"
            }
        }
        if eachRowAlone {
            for reference in expected
            where !sameNodes(view.visibleNodes(offset: reference.index, limit: 1), [reference][...]) {
                return
                    "visibleNodes(offset: \(reference.index), limit: 1) differs from the oracle's \(reference.item.id)"
            }
        }
        let limit = Int.random(in: 1 ... 50, using: &rng)
        let pages = [
            (0, 1), (max(0, count - 1), 1), (max(0, count - limit), limit), (count, 1), (count, 50), (count + 1, 3),
            (count + 1_000, 500), (Int.random(in: 0 ... count, using: &rng), limit),
            (Int.random(in: 0 ... count, using: &rng), 500),
            (-1, 5), (0, 0)
        ]
        for (offset, limit) in pages {
            let wanted = offset >= 0 && limit > 0 ? expected[min(offset, count) ..< min(offset + limit, count)] : []
            let page = view.rows(offset: offset, limit: limit)
            if page.count != wanted.count || !zip(page, wanted).allSatisfy({ same($0, $1.index, $1.item) }) {
                return "rows(offset: \(offset), limit: \(limit)): \(page.map(\.id)), oracle \(wanted.map(\.item.id))"
            }
            if !sameNodes(view.visibleNodes(offset: offset, limit: limit), wanted) {
                return "visibleNodes(offset: \(offset), limit: \(limit)) differs from the oracle"
            }
        }
        for id in probes {
            let wanted = nodeOfID[id].flatMap { table.rowOfNode[$0] }
            if view.index(of: id) != wanted {
                return
                    "index(of: \(id)) = \(String(describing: view.index(of: id))), oracle \(String(describing: wanted))"
            }
            let path = view.menu.node(withID: id).map { view.ancestors(of: $0).map(view.menu.id(of:)) }
            if let wanted = table.paths[id], path != wanted {
                return "ancestors of \(id): \(String(describing: path)), oracle \(String(describing: wanted))"
            }
        }
        return nil
    }

    @Test(arguments: shapes)
    func randomChangesMatchTheNaiveWalkOnEveryFieldAfterEveryStep(shape: Shape) throws {
        for run in 0 ..< UInt64(shape.runs) {
            let seed = Self.baseSeed &+ run
            try checkRun(shape, seed: seed)
        }
    }

    func checkRun(_ shape: Shape, seed: UInt64) throws {
        var rng = SplitMix64(state: seed)
        let spec = shape.make(&rng)
        let menu = try makeMenu(spec)
        let context = "shape \"\(shape.name)\", seed \(seed) (MENU_DIFFERENTIAL_SEED=\(Self.baseSeed))"
        // Ids from the spec, the oracle's input, not from the menu under test.
        var groupIDs: [String] = []
        var rowIDs: [String] = []
        func collect(_ specs: [TreeSpec]) {
            for spec in specs {
                if let children = spec.children {
                    groupIDs.append(spec.id)
                    collect(children)
                } else {
                    rowIDs.append(spec.id)
                }
            }
        }
        collect(spec)
        try #require(!groupIDs.isEmpty && !rowIDs.isEmpty, "\(context)")
        let allIDs = groupIDs + rowIDs
        let known = Set(allIDs)

        // Several sessions over one shared menu, each with its own reference tree.
        var views = (0 ..< shape.sessions).map { _ in FlattenedView(menu: menu) }
        let naives = (0 ..< shape.sessions).map { _ in NaiveMenu(spec: spec) }
        if let difference = Self.differenceInNodes(menu, naives[0].preorder()) {
            Issue.record("\(context): \(difference)")
            return
        }
        let nodeOfID = Dictionary(uniqueKeysWithValues: naives[0].preorder().map { ($0.id, $0.ordinal) })
        let nodeCount = allIDs.count
        // Every field of every row at every step; on tables of thousands of rows every fifth step
        // (the rows' positions, nodes and expansion still every step, the fields on every page).
        // Every row read on its own every fifth step, on tables of thousands of rows every tenth.
        func wholeRows(_ table: Table, step: Int) -> Bool { table.rows.count <= 2_000 || step % 5 == 0 }
        func eachRowAlone(_ table: Table, step: Int) -> Bool { step % (table.rows.count <= 2_000 ? 5 : 10) == 0 }
        for which in views.indices {
            if let difference = Self.difference(
                views[which], Table(naives[which], nodeCount: nodeCount), nodeOfID: nodeOfID,
                wholeRows: true, eachRowAlone: true, probes: Array(allIDs.prefix(64)), using: &rng)
            {
                Issue.record("\(context), before any step, session \(which): \(difference)")
                return
            }
        }
        for step in 0 ..< shape.steps {
            let which = Int.random(in: 0 ..< shape.sessions, using: &rng)
            var naive = naives[which]  // a handle on that session's reference tree (a class)
            let dice = Int.random(in: 0 ..< 100, using: &rng)
            let id: String
            var problem: String?
            if dice < 15 {
                // Reveal any node, group or row: every collapsed ancestor opens, one splice.
                id = allIDs.randomElement(using: &rng)!
                let expected = naive.reveal(id)
                let change = try views[which].reveal(id)
                if change != expected { problem = "reveal of \(id): \(change), oracle \(String(describing: expected))" }
            } else if dice < 85 {
                id = groupIDs.randomElement(using: &rng)!
                let put = dice >= 45
                // The target comes from the oracle: a toggle flips what the naive tree holds.
                let target = put ? Bool.random(using: &rng) : !naive.item(withID: id)!.isExpand
                let expected = naive.setExpanded(id, target)
                let change = put ? try views[which].setExpanded(id, target) : try views[which].toggle(id)
                if change != expected {
                    problem =
                        "\(put ? "setExpanded(\(target))" : "toggle") of \(id): \(change), oracle \(String(describing: expected))"
                }
            } else {
                // A change the model must refuse, leaving the state as it was.
                let row = dice < 92
                id =
                    row
                    ? rowIDs.randomElement(using: &rng)!
                    : Self.unknownIDs(near: groupIDs.randomElement(using: &rng)!).filter { !known.contains($0) }
                        .randomElement(using: &rng)!
                let wanted: ExpansionError = row ? .notAGroup(id: id) : .unknownGroup(id: id)
                let before = views[which].state
                for put in [false, true] {
                    do {
                        _ = put ? try views[which].setExpanded(id, true) : try views[which].toggle(id)
                        problem = "\(put ? "setExpanded" : "toggle") of \(String(reflecting: id)) was accepted"
                    } catch {
                        if error != wanted { problem = "\(String(reflecting: id)): \(error), wanted \(wanted)" }
                    }
                }
                if !row {
                    do {
                        _ = try views[which].reveal(id)
                        problem = "reveal of \(String(reflecting: id)) was accepted"
                    } catch {
                        if error != .unknownNode(id: id) { problem = "reveal of \(String(reflecting: id)): \(error)" }
                    }
                }
                if views[which].state != before {
                    problem = "a refused change of \(String(reflecting: id)) changed the state"
                }
            }
            if problem == nil {
                var probes = (0 ..< 24).map { _ in allIDs.randomElement(using: &rng)! } + [id]
                probes += Self.unknownIDs(near: id)
                let table = Table(naive, nodeCount: nodeCount, probes: probes)
                problem = Self.difference(
                    views[which], table, nodeOfID: nodeOfID, wholeRows: wholeRows(table, step: step),
                    eachRowAlone: eachRowAlone(table, step: step),
                    probes: probes, using: &rng)
            }
            if let problem {
                Issue.record("\(context), step \(step), session \(which): \(problem)")
                return
            }
        }
        // The views never shared state: each still matches its own oracle.
        for which in views.indices {
            if let difference = Self.difference(
                views[which], Table(naives[which], nodeCount: nodeCount), nodeOfID: nodeOfID,
                wholeRows: true, eachRowAlone: true, probes: Array(allIDs.prefix(2_000)), using: &rng)
            {
                Issue.record("\(context), at the end, session \(which): \(difference)")
            }
        }
    }

    /// Random steps rarely leave a deep link visible (each of its ancestors would have to be
    /// open), so this walks a chain on purpose: every link of a fully expanded chain, deepest
    /// first, collapsed and expanded again, the size difference carried through up to 63 open
    /// ancestors each time, with the whole table compared after every change (and every row read
    /// on its own after every eighth).
    @Test func collapsingAndReopeningEveryLinkOfOpenChainsMatchesTheOracle() throws {
        var rng = SplitMix64(state: Self.baseSeed)
        let spec = Self.deepChains(1, allExpanded: true, using: &rng)
        let menu = try makeMenu(spec)
        var view = FlattenedView(menu: menu)
        var naive = NaiveMenu(spec: spec)
        let items = naive.preorder()
        let nodeOfID = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0.ordinal) })
        let links = items.filter { $0.isGroup && $0.isExpand && !$0.children.isEmpty }.sorted { $0.depth > $1.depth }
        try #require(links.first?.depth == MenuBuilder.depthLimit - 2, "seed \(Self.baseSeed)")
        for (number, link) in links.enumerated() {
            for expanded in [false, true] {
                let change = try view.setExpanded(link.id, expanded)
                let expected = naive.setExpanded(link.id, expanded)
                let table = Table(naive, nodeCount: items.count)
                let problem =
                    change != expected
                    ? "\(change), oracle \(String(describing: expected))"
                    : Self.difference(
                        view, table, nodeOfID: nodeOfID, wholeRows: true, eachRowAlone: number % 8 == 0,
                        probes: [link.id], using: &rng)
                if let problem {
                    Issue.record(
                        "seed \(Self.baseSeed), \(expanded ? "reopening" : "collapsing") \(link.id) at depth \(link.depth): \(problem)"
                    )
                    return
                }
            }
        }
    }

    @Test func theChainsReachTheDeepestLevelAConfigMayHave() throws {
        var rng = SplitMix64(state: Self.baseSeed)
        let menu = try makeMenu(Self.deepChains(using: &rng))
        #expect(menu.nodes.map(menu.depth(of:)).max() == MenuBuilder.depthLimit - 1)
    }

    @Test func returningEveryGroupToItsDefaultLeavesAnEmptyOverlay() throws {
        var rng = SplitMix64(state: 42)
        let spec = randomTree(nodes: 300, maxDepth: 6, using: &rng)
        let menu = try makeMenu(spec)
        var view = FlattenedView(menu: menu)
        let groups = menu.nodes.filter(menu.isGroup)
        for _ in 0 ..< 2_000 { _ = try view.toggle(menu.id(of: groups.randomElement(using: &rng)!)) }
        for group in groups { _ = try view.setExpanded(menu.id(of: group), menu.isExpandedByDefault(group)) }
        #expect(view.state == SessionState())
        #expect(view.state.levels.isEmpty)
        #expect(view.count == FlattenedView(menu: menu).count)
    }
}
