import Foundation
import MenuAppTestSupport
import MenuModel
import MenuTestSupport
import NaiveReference
import Testing

@testable import MenuService
@testable import MenuSessions

@Suite("EncodedMenu: a page of rows as JSON, in one pass or in two")
struct EncodedMenuTests {
    /// A random menu, some random toggles, and pages at random offsets.
    private func pages(seed: UInt64, check: (FlattenedView, EncodedMenu, Int, Int) throws -> Void) throws {
        var rng = SplitMix64(state: seed)
        let menu = try makeMenu(randomTree(nodes: 400, maxDepth: 5, using: &rng))
        let encoded = EncodedMenu(menu: menu)
        var view = FlattenedView(menu: menu)
        let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
        for _ in 0 ..< 40 {
            if let group = groups.randomElement(using: &rng) { _ = try view.toggle(group) }
            let offset = Int.random(in: 0 ... max(0, view.count + 3), using: &rng)
            let limit = Int.random(in: 1 ... 60, using: &rng)
            try check(view, encoded, offset, limit)
        }
    }

    /// A page's bytes, written by a writer with room for every row's worst case (one pass), or
    /// with less than one row's worst case spare (two passes): whitespace fills it that far.
    private func pageBytes(_ encoded: EncodedMenu, _ view: FlattenedView, offset: Int, limit: Int, roomy: Bool)
        -> [UInt8]
    {
        var writer = JSONWriter(capacity: 64 * 1024)
        if roomy {
            #expect(limit * encoded.rowBound < writer.spareCapacity)
        } else {
            writer.raw([UInt8](repeating: UInt8(ascii: " "), count: writer.spareCapacity - encoded.rowBound + 1))
            #expect(writer.spareCapacity < encoded.rowBound)
        }
        encoded.writeRows(
            of: view, offset: offset, limit: limit, marks: nil, selection: RowSelection(nothingSelectedIn: view.menu),
            to: &writer)
        return Array(writer.bytes.drop { $0 == UInt8(ascii: " ") })
    }

    private func served(_ encoded: EncodedMenu, _ view: FlattenedView, offset: Int, limit: Int, roomy: Bool) throws
        -> [LiveRow]
    {
        try JSONDecoder().decode(
            [LiveRow].self, from: Data(pageBytes(encoded, view, offset: offset, limit: limit, roomy: roomy)))
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func pagesWrittenInOnePassMatchTheModel(seed: UInt64) throws {
        try pages(seed: seed) { view, encoded, offset, limit in
            let rows = try served(encoded, view, offset: offset, limit: limit, roomy: true)
            #expect(rows == view.rows(offset: offset, limit: limit).map(LiveRow.init))
        }
    }

    @Test(arguments: [4, 5, 6] as [UInt64])
    func pagesWrittenInTwoPassesMatchTheModel(seed: UInt64) throws {
        try pages(seed: seed) { view, encoded, offset, limit in
            let rows = try served(encoded, view, offset: offset, limit: limit, roomy: false)
            #expect(rows == view.rows(offset: offset, limit: limit).map(LiveRow.init))
        }
    }

    @Test func bothWaysWriteTheSameBytes() throws {
        try pages(seed: 7) { view, encoded, offset, limit in
            let onePass = String(
                decoding: pageBytes(encoded, view, offset: offset, limit: limit, roomy: true), as: UTF8.self)
            let twoPasses = String(
                decoding: pageBytes(encoded, view, offset: offset, limit: limit, roomy: false), as: UTF8.self)
            #expect(onePass == twoPasses)
        }
    }

    @Test func theRowBoundCoversTheLongestRow() throws {
        var rng = SplitMix64(state: 8)
        let menu = try makeMenu(randomTree(nodes: 400, maxDepth: 5, using: &rng))
        let encoded = EncodedMenu(menu: menu)
        var view = FlattenedView(menu: menu)
        for node in menu.nodes where menu.isGroup(node) && !view.isExpanded(node) {
            _ = try view.toggle(menu.id(of: node))
        }
        for offset in 0 ..< view.count {
            var writer = JSONWriter(capacity: 16)
            encoded.writeRows(
                of: view, offset: offset, limit: 1, marks: nil, selection: RowSelection(nothingSelectedIn: view.menu),
                to: &writer)
            #expect(writer.count - 2 <= encoded.rowBound)  // one row between [ and ]
        }
    }
}
