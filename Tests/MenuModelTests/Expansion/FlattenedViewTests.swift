import NaiveReference
import Testing

@testable import MenuModel

/// The seeds' examples and the view's contract, one behaviour per test.
@Suite struct FlattenedViewTests {
    /// Account > Profile, Privacy > (Blocked accounts, Permissions), all open.
    static let settings: [TreeSpec] = [
        .group(
            "account", "Account", expanded: true,
            [
                .row("profile", "Profile"),
                .group(
                    "privacy", "Privacy", expanded: true,
                    [
                        .row("blocked-accounts", "Blocked accounts"),
                        .row("permissions", "Permissions")
                    ])
            ])
    ]

    /// The Sichuan menu of the seed: main courses and breakfast, both expanded.
    static let sichuan: [TreeSpec] = [
        .group(
            "main", "主菜", expanded: true,
            ["宮保雞丁", "干燒魚", "回鍋肉", "麻婆豆腐", "家常豆腐", "黃燜鴨", "夫妻肺片", "鹽水鴨", "鍋巴肉片"]
                .enumerated().map { .row("m\($0.offset)", $0.element) }),
        .group(
            "breakfast", "早餐", expanded: true,
            ["擔擔面", "川北涼粉", "麻辣小面", "酸辣面", "酸辣粉"].enumerated().map { .row("b\($0.offset)", $0.element) })
    ]

    @Test func settingsTreeHasThreeLeafRows() throws {
        let view = FlattenedView(menu: try makeMenu(Self.settings))
        #expect(view.leafCount == 3)
        #expect(view.count == 5)
    }

    @Test func sichuanCountsFollowGroupsOpeningAndClosing() throws {
        var view = FlattenedView(menu: try makeMenu(Self.sichuan))
        #expect(view.count == 16)
        #expect(view.leafCount == 14)
        _ = try view.toggle("main")
        #expect(view.count == 7)
        _ = try view.toggle("breakfast")
        #expect(view.count == 2)
        #expect(view.leafCount == 0)
        _ = try view.toggle("main")
        #expect(view.count == 11)
        #expect(view.leafCount == 9)
    }

    @Test func rowsComeInPreorderWithDepths() throws {
        let view = FlattenedView(menu: try makeMenu(Self.settings))
        let rows = view.rows(offset: 0, limit: 10)
        #expect(rows.map(\.id) == ["account", "profile", "privacy", "blocked-accounts", "permissions"])
        #expect(rows.map(\.depth) == [0, 1, 1, 2, 2])
        #expect(rows.map(\.index) == [0, 1, 2, 3, 4])
        #expect(rows[0].childCount == 2 && rows[0].isExpanded == true)
        #expect(rows[1].childCount == nil && rows[1].isExpanded == nil)
    }

    @Test func pageStartsAtOffsetAndStopsAtTheEnd() throws {
        let view = FlattenedView(menu: try makeMenu(Self.sichuan))
        #expect(view.rows(offset: 10, limit: 3).map(\.title) == ["早餐", "擔擔面", "川北涼粉"])
        #expect(view.rows(offset: 14, limit: 50).map(\.id) == ["b3", "b4"])
        #expect(view.rows(offset: 16, limit: 5).isEmpty)
        #expect(view.rows(offset: 999, limit: 5).isEmpty)
    }

    @Test func emptyGroupIsARowWithNoChildren() throws {
        var view = FlattenedView(menu: try makeMenu([.group("empty", "Empty", []), .row("after")]))
        #expect(view.count == 2)
        #expect(view.leafCount == 1)
        let change = try view.toggle("empty")
        #expect(
            change
                == ExpansionChange(
                    id: "empty", isExpanded: true, index: 0, change: RowChange(at: 1, inserted: 0, removed: 0)))
        #expect(view.rows(offset: 0, limit: 5).map(\.id) == ["empty", "after"])
        #expect(view.rows(offset: 0, limit: 1)[0].childCount == 0)
    }

    @Test func collapsingAGroupReportsTheRowsRemoved() throws {
        var view = FlattenedView(menu: try makeMenu(Self.settings))
        let change = try view.toggle("privacy")
        #expect(
            change
                == ExpansionChange(
                    id: "privacy", isExpanded: false, index: 2, change: RowChange(at: 3, inserted: 0, removed: 2)))
        #expect(view.rows(offset: 0, limit: 10).map(\.id) == ["account", "profile", "privacy"])
    }

    @Test func hiddenGroupToggledShowsItsStateWhenRevealed() throws {
        var view = FlattenedView(menu: try makeMenu(Self.settings))
        _ = try view.toggle("account")
        let hidden = try view.toggle("privacy")
        #expect(hidden == ExpansionChange(id: "privacy", isExpanded: false, index: nil, change: nil))
        #expect(view.count == 1)
        let reveal = try view.toggle("account")
        #expect(reveal.change == RowChange(at: 1, inserted: 2, removed: 0))
        #expect(view.rows(offset: 0, limit: 10).map(\.id) == ["account", "profile", "privacy"])
        #expect(view.index(of: "permissions") == nil)
    }

    @Test func settingTheCurrentStateChangesNothing() throws {
        var view = FlattenedView(menu: try makeMenu(Self.settings))
        let first = try view.setExpanded("privacy", false)
        let again = try view.setExpanded("privacy", false)
        #expect(first.change == RowChange(at: 3, inserted: 0, removed: 2))
        #expect(
            again
                == ExpansionChange(
                    id: "privacy", isExpanded: false, index: 2, change: RowChange(at: 3, inserted: 0, removed: 0)))
        #expect(view.count == 3)
    }

    @Test func indexOfHiddenRowIsNil() throws {
        var view = FlattenedView(menu: try makeMenu(Self.settings))
        #expect(view.index(of: "permissions") == 4)
        _ = try view.toggle("privacy")
        #expect(view.index(of: "permissions") == nil)
        #expect(view.index(of: "no-such-id") == nil)
    }

    @Test func togglingARowIsNotAGroup() throws {
        var view = FlattenedView(menu: try makeMenu(Self.settings))
        #expect(throws: ExpansionError.notAGroup(id: "profile")) { try view.toggle("profile") }
    }

    @Test func togglingAnUnknownIDIsUnknownGroup() throws {
        var view = FlattenedView(menu: try makeMenu(Self.settings))
        #expect(throws: ExpansionError.unknownGroup(id: "nope")) { try view.setExpanded("nope", true) }
    }

    @Test func sessionsDoNotSeeEachOthersChanges() throws {
        let menu = try makeMenu(Self.sichuan)
        var first = FlattenedView(menu: menu)
        let second = FlattenedView(menu: menu, state: first.state)
        _ = try first.toggle("main")
        #expect(first.count == 7)
        #expect(second.count == 16)
        #expect(FlattenedView(menu: menu).count == 16)
    }

    @Test func severalNestingLevelsCollapseAndReopenWithInnerStateKept() throws {
        let spec: [TreeSpec] = [
            .group(
                "a", expanded: true,
                [
                    .group(
                        "b", expanded: true,
                        [
                            .group("c", expanded: false, [.row("d"), .row("e")]),
                            .row("f")
                        ])
                ]),
            .row("g")
        ]
        var view = FlattenedView(menu: try makeMenu(spec))
        #expect(view.rows(offset: 0, limit: 9).map(\.id) == ["a", "b", "c", "f", "g"])
        _ = try view.toggle("c")
        #expect(view.rows(offset: 0, limit: 9).map(\.id) == ["a", "b", "c", "d", "e", "f", "g"])
        _ = try view.toggle("a")
        #expect(view.rows(offset: 0, limit: 9).map(\.id) == ["a", "g"])
        _ = try view.toggle("a")
        #expect(view.rows(offset: 0, limit: 9).map(\.id) == ["a", "b", "c", "d", "e", "f", "g"])
        #expect(view.rows(offset: 0, limit: 9).map(\.depth) == [0, 1, 2, 3, 3, 2, 0])
    }

    @Test func changedGroupsAreReportedByID() throws {
        let menu = try makeMenu(Self.settings)
        var view = FlattenedView(menu: menu)
        _ = try view.toggle("privacy")
        #expect(view.state.changedGroupCount == 1)
        #expect(view.state.changedGroups(in: menu).map(\.id) == ["privacy"])
        #expect(view.state.changedGroups(in: menu).map(\.isExpanded) == [false])
    }
}

@Suite("forEachVisibleNode: the page walk the server encodes from")
struct ForEachVisibleNodeTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func walksExactlyTheNodesWhoseAncestorsAreAllExpanded(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let menu = try makeMenu(randomTree(nodes: 300, maxDepth: 5, using: &random))
        var view = FlattenedView(menu: menu)
        for node in menu.nodes where menu.isGroup(node) && random.next() % 3 == 0 {
            _ = try view.toggle(menu.id(of: node))
        }
        // The reference: every node, in preorder, whose ancestors are all expanded.
        let visible = menu.nodes.filter { node in
            sequence(first: node, next: menu.parent(of:)).dropFirst().allSatisfy(view.isExpanded)
        }
        #expect(visible.count == view.count)
        for offset in [0, 1, 5, view.count / 2, max(0, view.count - 50), view.count - 1] {
            var walked: [VisibleNode] = []
            view.forEachVisibleNode(offset: offset, limit: 50) { walked.append($0) }
            let expected = visible[offset ..< min(offset + 50, visible.count)]
            #expect(walked.map(\.node) == Array(expected))
            #expect(walked.map(\.index) == Array(offset ..< min(offset + 50, view.count)))
            #expect(walked.map(\.isExpanded) == expected.map(view.isExpanded))
        }
    }

    @Test func walksNothingPastTheEndOrForAnEmptyPage() throws {
        var random = SplitMix64(state: 7)
        let view = FlattenedView(menu: try makeMenu(randomTree(nodes: 50, maxDepth: 3, using: &random)))
        for (offset, limit) in [(view.count, 10), (view.count + 5, 10), (0, 0), (-1, 5)] {
            var walked = 0
            view.forEachVisibleNode(offset: offset, limit: limit) { _ in walked += 1 }
            #expect(walked == 0)
        }
    }
}
