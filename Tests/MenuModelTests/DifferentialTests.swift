import Testing
@testable import MenuModel

/// The flattened view must agree with the seeds' naive recursive walk on every field.
@Suite struct DifferentialTests {
    func assertSameView(_ view: FlattenedView, _ naive: NaiveMenu, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(view.count == naive.count, sourceLocation: sourceLocation)
        #expect(view.leafCount == naive.leafCount, sourceLocation: sourceLocation)
        let expected = naive.rows(offset: 0, limit: naive.count + 1)
        let actual = view.rows(offset: 0, limit: view.count + 1)
        #expect(actual.count == expected.count, sourceLocation: sourceLocation)
        for (row, reference) in zip(actual, expected) {
            let item = reference.item
            #expect(row.index == reference.index, sourceLocation: sourceLocation)
            #expect(row.id == item.id, sourceLocation: sourceLocation)
            #expect(row.title == item.title, sourceLocation: sourceLocation)
            #expect(row.depth == item.depth, sourceLocation: sourceLocation)
            #expect(row.isGroup == item.isGroup, sourceLocation: sourceLocation)
            #expect(row.isExpanded == (item.isGroup ? item.isExpand : nil), sourceLocation: sourceLocation)
            #expect(row.childCount == (item.isGroup ? item.children.count : nil), sourceLocation: sourceLocation)
            #expect(row.attributes == item.attributes, sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func randomTogglesMatchTheNaiveWalkAcrossIndependentStates(seed: UInt64) throws {
        var rng = SplitMix64(state: seed)
        let spec = randomTree(nodes: 150, maxDepth: 5, using: &rng)
        let menu = try makeMenu(spec)
        let groupIDs = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
        try #require(!groupIDs.isEmpty)
        let allIDs = menu.nodes.map(menu.id(of:))

        // Several sessions over one shared menu, each with its own reference tree.
        var views = (0 ..< 3).map { _ in FlattenedView(menu: menu) }
        var naives = (0 ..< 3).map { _ in NaiveMenu(spec: spec) }
        for step in 0 ..< 1_000 {
            let which = Int.random(in: 0 ..< 3, using: &rng)
            let id = groupIDs.randomElement(using: &rng)!
            let change: ExpansionChange
            let expected: ExpansionChange?
            if Bool.random(using: &rng) {
                let target = !views[which].isExpanded(menu.node(withID: id)!)
                change = try views[which].toggle(id)
                expected = naives[which].setExpanded(id, target)
            } else {
                let target = Bool.random(using: &rng)
                change = try views[which].setExpanded(id, target)
                expected = naives[which].setExpanded(id, target)
            }
            #expect(change == expected, "step \(step) seed \(seed)")
            #expect(views[which].count == naives[which].count)
            #expect(views[which].leafCount == naives[which].leafCount)
            // Spot checks every step; full comparison every 50 steps.
            let offset = Int.random(in: 0 ... max(0, views[which].count), using: &rng)
            let limit = Int.random(in: 1 ... 20, using: &rng)
            let page = views[which].rows(offset: offset, limit: limit).map(\.id)
            #expect(page == naives[which].rows(offset: offset, limit: limit).map(\.item.id))
            let probe = allIDs.randomElement(using: &rng)!
            #expect(views[which].index(of: probe) == naives[which].index(of: probe))
            if step % 50 == 0 {
                for i in 0 ..< 3 { assertSameView(views[i], naives[i]) }
            }
        }
        for i in 0 ..< 3 { assertSameView(views[i], naives[i]) }
    }

    @Test func returningEveryGroupToItsDefaultLeavesAnEmptyOverlay() throws {
        var rng = SplitMix64(state: 42)
        let spec = randomTree(nodes: 300, maxDepth: 6, using: &rng)
        let menu = try makeMenu(spec)
        var view = FlattenedView(menu: menu)
        let groups = menu.nodes.filter(menu.isGroup)
        for _ in 0 ..< 2_000 { _ = try view.toggle(menu.id(of: groups.randomElement(using: &rng)!)) }
        for group in groups { _ = try view.setExpanded(menu.id(of: group), menu.isExpandedByDefault(group)) }
        #expect(view.state == ExpansionState())
        #expect(view.state.levels.isEmpty)
        #expect(view.count == FlattenedView(menu: menu).count)
    }
}
