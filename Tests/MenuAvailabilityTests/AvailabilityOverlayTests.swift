import MenuAvailability
import MenuModel
import NaiveReference
import Testing

@Suite("Availability overlay: batches all or nothing, expiry, reloads by id")
struct AvailabilityOverlayTests {
    let menu = try! makeMenu([
        .group(
            "mains", expanded: true, [.row("fish"), .row("duck"), .group("noodles", expanded: false, [.row("dan-dan")])]
        ),
        .group("breakfast", expanded: false, [.row("congee"), .row("youtiao")]),
        .row("tea")
    ])
    let now = Timestamp(milliseconds: 1_000_000)

    @Test func aBatchAppliesWholeAndCountsOneRevision() throws {
        let (overlay, changed) = try AvailabilityOverlay().applying(
            [
                .init(id: "fish", Availability(state: .soldOut, reason: "sold out tonight")),
                .init(id: "breakfast", Availability(state: .paused, until: Timestamp(milliseconds: 2_000_000))),
                .init(id: "tea", Availability(state: .available))
            ], on: menu, now: now)
        #expect(overlay.revision == 1 && changed == ["fish", "breakfast"])
        #expect(overlay.entries["fish"]?.reason == "sold out tonight" && overlay.entries["tea"] == nil)
        let (same, none) = try overlay.applying([.init(id: "fish", overlay.entries["fish"]!)], on: menu, now: now)
        #expect(same == overlay && none.isEmpty, "a change to what a node has already is none")
        let (cleared, back) = try overlay.applying(
            [.init(id: "fish", Availability(state: .available))], on: menu, now: now)
        #expect(cleared.revision == 2 && back == ["fish"] && cleared.entries["fish"] == nil)
    }

    @Test func aBatchWithAnyWrongChangeChangesNothing() {
        let overlay = AvailabilityOverlay()
        let fish = AvailabilityOverlay.Change(id: "fish", Availability(state: .soldOut))
        #expect(throws: AvailabilityOverlay.Refusal.unknownIDs(["nope", "gone"], count: 2)) {
            try overlay.applying(
                [
                    fish, .init(id: "nope", Availability(state: .paused)),
                    .init(id: "gone", Availability(state: .paused))
                ], on: menu, now: now)
        }
        #expect(throws: AvailabilityOverlay.Refusal.duplicateID("fish")) {
            try overlay.applying([fish, fish], on: menu, now: now)
        }
        #expect(throws: AvailabilityOverlay.Refusal.untilNotInFuture(id: "duck", until: now, now: now)) {
            try overlay.applying(
                [fish, .init(id: "duck", Availability(state: .paused, until: now))], on: menu, now: now)
        }
        #expect(throws: AvailabilityOverlay.Refusal.untilForAvailable(id: "duck")) {
            try overlay.applying(
                [.init(id: "duck", Availability(state: .available, until: Timestamp(milliseconds: 2_000_000)))],
                on: menu, now: now)
        }
        #expect(
            AvailabilityOverlay.Refusal.unknownIDs(["nope"], count: 3).description
                == #"the menu has no node "nope" (and 2 more); nothing was changed"#)
    }

    @Test func entriesEndAtTheirUntilAndAReloadDropsOnlyIdsThatLeft() throws {
        let (overlay, _) = try AvailabilityOverlay().applying(
            [
                .init(id: "fish", Availability(state: .soldOut, until: Timestamp(milliseconds: 1_500_000))),
                .init(id: "duck", Availability(state: .paused, until: Timestamp(milliseconds: 3_000_000))),
                .init(id: "tea", Availability(state: .paused))
            ], on: menu, now: now)
        #expect(overlay.nextExpiry == Timestamp(milliseconds: 1_500_000))
        #expect(overlay.advanced(to: Timestamp(milliseconds: 1_499_999), hours: nil).changed.isEmpty)
        let (later, expired) = overlay.advanced(to: Timestamp(milliseconds: 1_500_000), hours: nil)
        #expect(expired == ["fish"] && later.revision == overlay.revision + 1 && later.entries.count == 2)
        let next = try makeMenu([.group("mains", expanded: true, [.row("duck")])])
        let (kept, dropped) = later.keeping(nodesOf: next)
        #expect(dropped == ["tea"] && kept.entries.keys.sorted() == ["duck"] && kept.revision == later.revision + 1)
        #expect(kept.keeping(nodesOf: next).overlay == kept)
    }
}

@Suite("Resolved availability: own, inherited and computed, as a naive walk over every node says")
struct ResolvedAvailabilityTests {
    /// What `node` shows, node by node: its own entry; else the nearest ancestor's; else, for a
    /// group, a computed one when every row under it shows one.
    static func naive(_ node: Menu.Node, _ overlay: AvailabilityOverlay, _ menu: Menu) -> Availability? {
        func explicit(_ node: Menu.Node) -> Availability? { overlay.entries[menu.id(of: node)] }
        func inherited(_ node: Menu.Node) -> Availability? {
            var current: Menu.Node? = node
            while let at = current {
                if let found = explicit(at) { return found }
                current = menu.parent(of: at)
            }
            return nil
        }
        if let found = inherited(node) { return found }
        guard menu.isGroup(node) else { return nil }
        let rows = (node + 1 ..< menu.subtreeEnd(node)).filter { !menu.isGroup($0) }
        let shown = rows.map(inherited)
        guard !rows.isEmpty, shown.allSatisfy({ $0 != nil }) else { return nil }
        return Availability(
            state: shown.allSatisfy { $0!.state == .soldOut } ? .soldOut : .paused,
            until: shown.compactMap { $0!.until }.min())
    }

    @Test(arguments: 0 ..< 4 as Range<UInt64>)
    func everyNodeShowsWhatTheNaiveWalkSays(seed: UInt64) throws {
        var rng = SplitMix64(state: 0x27_03 ^ seed &* 0x9E37_79B9_7F4A_7C15)
        for _ in 0 ..< 40 {
            let menu = try makeMenu(randomTree(nodes: Int.random(in: 1 ... 60, using: &rng), maxDepth: 4, using: &rng))
            var changes: [AvailabilityOverlay.Change] = []
            for node in menu.nodes.shuffled(using: &rng).prefix(Int.random(in: 0 ... menu.nodeCount, using: &rng)) {
                let until =
                    Bool.random(using: &rng) ? Timestamp(milliseconds: Int64.random(in: 2 ... 9, using: &rng)) : nil
                let state: AvailabilityState = Bool.random(using: &rng) ? .soldOut : .paused
                changes.append(.init(id: menu.id(of: node), Availability(state: state, until: until)))
            }
            let overlay = try AvailabilityOverlay().applying(changes, on: menu, now: Timestamp(milliseconds: 1)).overlay
            let resolved = ResolvedAvailability(overlay, on: menu)
            for node in menu.nodes {
                #expect(
                    resolved.availability(of: node) == Self.naive(node, overlay, menu),
                    "\(menu.id(of: node)) in \(overlay.entries)")
            }
        }
    }
}
