import MenuModel
import NaiveReference
import Testing

@testable import MenuService

/// ``SearchCache``: bounded by entries and by positions held, least recently used out first, a
/// view larger than the whole budget answered but never kept, a hit never rebuilt.
@Suite struct SearchCacheTests {
    static let menu = try! makeMenu((1 ... 20).map { .row("r\($0)", "Row \($0)") })

    /// The view of the rows whose number contains `digit`, and the query naming it.
    static func entry(_ text: String) throws -> (SearchQuery, FilteredView) {
        let query = try SearchQuery(text: text)
        return (query, try SearchIndex(menu: menu).view(for: query, in: menu))
    }

    @Test func aHitIsNotRebuiltAndTheLeastRecentlyUsedGoesFirst() throws {
        let cache = SearchCache(maxEntries: 2, maxPositions: 1_000)
        var builds = 0
        func look(_ text: String) throws -> Int {
            let (query, view) = try Self.entry(text)
            return cache.view(for: query) {
                builds += 1
                return view
            }.count
        }
        #expect(try look("row 1") == 11)  // 1, 10 … 19
        #expect(try look("row 2") == 2)  // 2, 20
        #expect(try look("row 1") == 11 && builds == 2)
        #expect(try look("row 3") == 1 && builds == 3)  // evicts "row 2", the least recently used
        #expect(try look("row 1") == 11 && builds == 3)
        #expect(try look("row 2") == 2 && builds == 4)
        #expect(cache.usage.entries == 2)
    }

    @Test func positionsHeldStayWithinTheBudgetAndAnOversizedViewIsNotKept() throws {
        // A view holds its matches and four numbers per row shown (node, descendants, place, set size).
        let (small, smallView) = try Self.entry("row 2")  // 2 matches, 2 shown: 10 positions
        let (large, largeView) = try Self.entry("row")  // 20 matches, 20 shown: 100 positions
        let cache = SearchCache(maxEntries: 8, maxPositions: 20)
        _ = cache.view(for: small) { smallView }
        #expect(cache.usage == (1, 10))
        _ = cache.view(for: large) { largeView }
        #expect(cache.usage == (1, 10))  // answered, not kept
        let (other, otherView) = try Self.entry("row 3")  // 1 match: 5 positions
        _ = cache.view(for: other) { otherView }
        #expect(cache.usage == (2, 15))
        let (tight, tightView) = try Self.entry("row 1")  // 11 matches: 55 positions, over the budget alone
        _ = cache.view(for: tight) { tightView }
        #expect(cache.usage.positions <= 20)
    }
}
