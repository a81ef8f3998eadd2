import Foundation
import MenuAvailability
import MenuModel
import MenuSessions
import MenuTestSupport
import NaiveReference
import Testing

@testable import MenuService

/// Rows with availability (issue 27 §2): every row of a page shows what the resolved overlay
/// says of its node (own, from the group above it, or computed for a group), in every locale, in
/// both ways of writing a page and in a filtered page; every other field is as without it.
@Suite("EncodedMenu with availability")
struct EncodedMenuAvailabilityTests {
    /// Rows of a page, as objects.
    static func page(
        _ encoded: EncodedMenu, _ view: FlattenedView, offset: Int, limit: Int, marks: AvailabilityMarks?, roomy: Bool
    ) throws -> [[String: Any]] {
        var writer = JSONWriter(capacity: 256 * 1024)
        if !roomy {  // leaves less than the page's worst case: the measured way
            writer.raw(
                [UInt8](
                    repeating: UInt8(ascii: " "),
                    count: writer.spareCapacity - encoded.rowBound - (marks?.maxFragmentLength ?? 0) + 1))
        }
        encoded.writeRows(
            of: view, offset: offset, limit: limit, marks: marks, selection: RowSelection(nothingSelectedIn: view.menu),
            to: &writer)
        let json = Data(writer.bytes.drop { $0 == UInt8(ascii: " ") })
        return try #require(try JSONSerialization.jsonObject(with: json) as? [[String: Any]])
    }

    /// What the row of `node` carries: the resolved availability, and whether it is the node's
    /// own entry, a group's above it (`from`) or computed.
    static func expected(
        _ node: Menu.Node, _ overlay: AvailabilityOverlay, _ resolved: ResolvedAvailability, _ menu: Menu
    )
        -> NSDictionary?
    {
        guard let availability = resolved.availability(of: node) else { return nil }
        var object: [String: Any] = ["state": availability.state.rawValue]
        if let until = availability.until { object["until"] = until.rfc3339 }
        if let reason = availability.reason { object["reason"] = reason }
        if overlay.entries[menu.id(of: node)] == nil {
            var ancestor = menu.parent(of: node)
            while let group = ancestor, overlay.entries[menu.id(of: group)] == nil { ancestor = menu.parent(of: group) }
            if let group = ancestor { object["from"] = menu.id(of: group) } else { object["computed"] = true }
        }
        return object as NSDictionary
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func everyRowShowsItsNodesAvailabilityAndNothingElseChanges(seed: UInt64) throws {
        let menu = try EncodedMenuLocaleTests.localizedMenu(seed: seed, nodes: 200)
        let base = EncodedMenu(menu: menu)
        let encodings =
            [base] + menu.localeIndices.dropFirst().map { EncodedMenu(localizing: base, menu: menu, locale: $0) }
        var rng = SplitMix64(state: 0xA7A1 ^ seed)
        var view = FlattenedView(menu: menu)
        let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
        let reasons = ["back at 19:30", "\"quoted\" \\ and 好", String(repeating: "é", count: 100)]
        for step in 0 ..< 20 {
            var changes: [AvailabilityOverlay.Change] = []
            for node in menu.nodes.shuffled(using: &rng).prefix(Int.random(in: 0 ... 40, using: &rng)) {
                let until =
                    Bool.random(using: &rng) ? Timestamp(milliseconds: Int64.random(in: 2 ... 9, using: &rng)) : nil
                let reason = Bool.random(using: &rng) ? reasons.randomElement(using: &rng) : nil
                let state: AvailabilityState = Bool.random(using: &rng) ? .soldOut : .paused
                changes.append(.init(id: menu.id(of: node), Availability(state: state, until: until, reason: reason)))
            }
            let overlay = try AvailabilityOverlay().applying(changes, on: menu, now: Timestamp(milliseconds: 1)).overlay
            let resolved = ResolvedAvailability(overlay, on: menu)
            let marks = AvailabilityMarks(resolved)
            #expect((marks == nil) == overlay.entries.isEmpty)
            for _ in 0 ..< 3 { if let group = groups.randomElement(using: &rng) { _ = try view.toggle(group) } }
            let offset = Int.random(in: 0 ... max(0, view.count - 1), using: &rng)
            let limit = Int.random(in: 1 ... 120, using: &rng)
            for (locale, encoded) in encodings.enumerated() {
                let plain = try Self.page(encoded, view, offset: offset, limit: limit, marks: nil, roomy: true)
                for roomy in [true, false] {
                    let rows = try Self.page(encoded, view, offset: offset, limit: limit, marks: marks, roomy: roomy)
                    try #require(rows.count == plain.count)
                    for (row, plainRow) in zip(rows, plain) {
                        let node = try #require(menu.node(withID: row["id"] as? String ?? ""))
                        let shown = row["availability"] as? NSDictionary
                        #expect(
                            shown == Self.expected(node, overlay, resolved, menu),
                            "seed \(seed) step \(step) locale \(locale) roomy \(roomy) node \(menu.id(of: node))")
                        var rest = row
                        rest["availability"] = nil
                        #expect(rest as NSDictionary == plainRow as NSDictionary)
                    }
                }
                // A row alone (GET /nodes/{id}) as on a page.
                if offset < view.count {
                    var writer = JSONWriter(capacity: 16)
                    encoded.writeRow(
                        of: view, at: offset, marks: marks, selection: RowSelection(nothingSelectedIn: view.menu),
                        to: &writer)
                    let row = try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? NSDictionary
                    let first = try Self.page(encoded, view, offset: offset, limit: 1, marks: marks, roomy: true)
                    #expect(row == first.first as NSDictionary?)
                }
            }
        }
    }

    @Test func aFilteredPageShowsAvailabilityAsTheSessionsTreeDoes() throws {
        let menu = try EncodedMenuLocaleTests.localizedMenu(seed: 4, nodes: 150)
        let served = ServedMenu(MenuGeneration(menu))
        let groups = menu.nodes.filter(menu.isGroup)
        let firstGroup = try #require(groups.first)
        let leaf = try #require(menu.nodes.first { !menu.isGroup($0) })
        let overlay = try AvailabilityOverlay().applying(
            [
                .init(id: menu.id(of: firstGroup), Availability(state: .paused, reason: "kitchen")),
                .init(id: menu.id(of: leaf), Availability(state: .soldOut))
            ], on: menu, now: Timestamp(milliseconds: 1)
        ).overlay
        let withAvailability = served.with(overlay, now: Timestamp(milliseconds: 1))
        let marks = try #require(withAvailability.availability.marks)
        let filtered = try withAvailability.filteredView(
            for: try SearchQuery(text: "1"), slots: SearchBuildSlots(limit: 1))
        var writer = JSONWriter(capacity: 1024)
        withAvailability.encoded[0].writeRows(
            of: filtered, offset: 0, limit: 500, marks: marks,
            selection: RowSelection(nothingSelectedIn: filtered.menu), to: &writer)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [[String: Any]])
        #expect(!rows.isEmpty)
        for row in rows {
            let node = try #require(menu.node(withID: row["id"] as? String ?? ""))
            #expect(
                row["availability"] as? NSDictionary
                    == Self.expected(node, overlay, withAvailability.availability.resolved, menu))
        }
        // The served copy shares the encoded rows and the search cache, and only it shows the overlay.
        #expect(withAvailability.searchCache === served.searchCache)
        #expect(served.availability.marks == nil)
    }
}
