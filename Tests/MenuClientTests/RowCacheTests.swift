// RowCache against the model: a cache filled from MenuModel's FlattenedView, then given each
// change's splice (with what a write's answer tells, or only the splice, as the feed does),
// holds at every step only rows equal to the model's rows at their positions.

import Foundation
import MenuModel
import Testing

@testable import MenuClient

@Suite(.timeLimit(.minutes(10))) struct RowCacheTests {
    /// The model's rows as the client's type (attributes left out: a change never alters them).
    private func rows(of view: FlattenedView) -> [MenuRow] {
        view.rows(offset: 0, limit: view.count).map {
            MenuRow(
                index: $0.index, id: $0.id, title: $0.title, depth: $0.depth, parentId: $0.parentID,
                isGroup: $0.isGroup,
                isExpanded: $0.isExpanded, childCount: $0.childCount, attributes: nil,
                visibleDescendantCount: $0.visibleDescendantCount)
        }
    }

    @Test func everyCachedRowStaysTheModelsRowThroughSixHundredRandomSplices() throws {
        let menu = try Menu(jsonData: Data(ClientTestMenus.large().utf8))
        let ids = ClientTestMenus.ids()
        var view = FlattenedView(menu: menu)
        var cache = RowCache(count: view.count)
        cache.install(rows(of: view), at: 0)
        var random = ClientTestRandom(state: 600)
        var updated = 0
        for step in 0 ..< 600 {
            let fromFeed = Int.random(in: 0 ..< 4, using: &random) == 0
            let splice: RowChange?
            var hint = RowCache.ChangedGroup.unknown
            switch Int.random(in: 0 ..< 20, using: &random) {
            case 0 ..< 14:
                let change = try view.setExpanded(
                    ids.groups.randomElement(using: &random)!, Bool.random(using: &random),
                    recursive: Int.random(in: 0 ..< 4, using: &random) == 0)
                splice = change.change
                if let at = change.change?.at, change.index == at - 1 {
                    hint = .group(id: change.id, isExpanded: change.isExpanded)
                }
            case 14 ..< 19:
                splice = try view.reveal(ids.rows.randomElement(using: &random)!).change
                hint = .revealed
            default:
                splice =
                    view.setAll([ExpansionMode.expanded, .collapsed, .default].randomElement(using: &random)!).change
            }
            guard let splice else { continue }
            updated += try cache.apply(
                MenuSplice(at: splice.at, inserted: splice.inserted, removed: splice.removed),
                changedGroup: fromFeed ? .unknown : hint
            ).count
            let model = rows(of: view)
            #expect(cache.count == model.count, "step \(step)")
            let wrong = (0 ..< min(cache.count, model.count)).filter { index in
                cache.row(at: index).map { $0 != model[index] } ?? false
            }
            #expect(
                wrong.isEmpty,
                "step \(step): rows \(wrong.prefix(5)) differ: \(wrong.prefix(2).map { (cache.row(at: $0)!, model[$0]) })"
            )
            // Refill a random stretch, as page loads do.
            let start = Int.random(in: 0 ..< max(1, model.count), using: &random)
            cache.install(Array(model[start ..< min(model.count, start + 60)]), at: start)
        }
        #expect(updated > 300)
    }

    @Test func aSpliceThatDoesNotFitTheTableIsRefused() {
        var cache = RowCache(count: 5)
        #expect(throws: RowCache.SpliceOutOfRange.self) {
            try cache.apply(MenuSplice(at: 4, inserted: 0, removed: 2), changedGroup: .unknown)
        }
        #expect(throws: RowCache.SpliceOutOfRange.self) {
            try cache.apply(MenuSplice(at: 6, inserted: 1, removed: 0), changedGroup: .unknown)
        }
        #expect(cache.count == 5)
    }
}
