import MenuModel
import Synchronization

/// The filtered views of recent searches of one menu, shared by every session (a filtered view
/// depends on the menu and the query only): a bounded least-recently-used cache.
///
/// Invariant: at most ``maxEntries`` views, holding together at most ``maxPositions``
/// (``FilteredView/positionsHeld``; a view larger than that alone is answered, never kept);
/// `order` lists the keys from least to most recently used, each once, exactly the keys of
/// `views`. Cost: a hit is one hash of the query and a move within `order` (O(entries), at most
/// 64); the lock is held for that only, never while a view is built. Lives in ``ServedMenu``, so
/// a reload drops it with the old menu. Memory: up to 8 bytes per shown node and 4 per match of
/// the views kept, so at most about 4 × ``maxPositions`` bytes (16 MB).
package final class SearchCache: Sendable {
    package let maxEntries: Int
    package let maxPositions: Int

    private struct State {
        var views: [SearchQuery: FilteredView] = [:]
        var order: [SearchQuery] = []
        var positions = 0
    }

    private let state = Mutex(State())

    package init(maxEntries: Int = 64, maxPositions: Int = 4_000_000) {
        self.maxEntries = maxEntries
        self.maxPositions = maxPositions
    }

    /// The cached view of `query`, or the one `build` makes (then kept, evicting the least
    /// recently used views until it fits). `build` runs without the lock; two requests missing
    /// at once may both build, and the second keeps its own.
    package func view<Failure: Error>(for query: SearchQuery, build: () throws(Failure) -> FilteredView) throws(Failure)
        -> FilteredView
    {
        if let hit = state.withLock({ state -> FilteredView? in
            guard let view = state.views[query] else { return nil }
            state.order.removeAll { $0 == query }
            state.order.append(query)
            return view
        }) {
            return hit
        }
        let built = try build()
        guard built.positionsHeld <= maxPositions else { return built }
        state.withLock { state in
            if let old = state.views.removeValue(forKey: query) {
                state.positions -= old.positionsHeld
                state.order.removeAll { $0 == query }
            }
            while !state.order.isEmpty
                && (state.order.count >= maxEntries || state.positions + built.positionsHeld > maxPositions)
            {
                let evicted = state.order.removeFirst()
                state.positions -= state.views.removeValue(forKey: evicted)?.positionsHeld ?? 0
            }
            state.views[query] = built
            state.order.append(query)
            state.positions += built.positionsHeld
        }
        return built
    }

    /// How many views are kept and the positions they hold (tests, metrics).
    package var usage: (entries: Int, positions: Int) { state.withLock { ($0.views.count, $0.positions) } }
}
