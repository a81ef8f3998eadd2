import MenuModel
import Synchronization

/// A menu as the session stores see it: the menu and its place in the order reloads installed
/// menus. A session's ``SessionState`` holds positions in one menu, so each stored session
/// remembers the ``MenuEpoch`` its state belongs to; a request names the generation it serves, and
/// the store hands back a state for exactly that menu (rebasing the session first when it is older).
package struct MenuGeneration: Sendable {
    package let menu: Menu
    package let epoch: MenuEpoch

    /// The first generation: a menu served since start-up.
    package init(_ menu: Menu) {
        self.menu = menu
        epoch = MenuEpoch(number: 1, nodeCount: menu.nodeCount)
    }

    private init(menu: Menu, epoch: MenuEpoch) {
        self.menu = menu
        self.epoch = epoch
    }

    /// The generation after this one, serving `menu`. Builds the translation from this menu to
    /// `menu` (O(nodes of this menu) id lookups) and links this epoch to the new one, so sessions
    /// still on this menu (or an older one) can be carried over; call it once per generation, before
    /// the new generation is handed to any request.
    ///
    /// With `keepingPrevious`, the new epoch keeps this menu (``MenuEpoch``) until it is succeeded
    /// in turn, so sessions carried over from this menu can be told the reload's splices
    /// (``ReloadMark``); a store that records no reload entries has no use for it.
    package func succeeded(by menu: Menu, keepingPrevious: Bool = false) -> MenuGeneration {
        let translation = MenuTranslation(from: self.menu, to: menu)
        let next = MenuEpoch(
            number: epoch.number + 1, nodeCount: menu.nodeCount,
            reloadSource: keepingPrevious ? ReloadSource(menu: self.menu, translation: translation) : nil)
        epoch.link(to: next, translation: translation)
        return MenuGeneration(menu: menu, epoch: next)
    }
}

/// One place in the order of menus served: a number, and (once a reload has happened) the
/// translation to the next menu and that menu's epoch.
///
/// Invariant: epochs form a chain by ``number``, each linked at most once to its successor. An
/// epoch keeps translations (a few bytes per node) and, only while it is the newest, the menu of
/// the epoch before it (``ReloadSource``): so besides the menus requests hold, at most one older
/// menu stays in memory, and a reload frees the one before. Sessions not yet rebased keep just
/// their epoch, and through the chain the translations to the current menu. Once every session on
/// an epoch has been rebased, nothing refers to it and the chain behind the oldest live epoch is
/// freed.
package final class MenuEpoch: Sendable {
    /// 1 for the menu loaded at start-up, +1 per reload.
    package let number: Int
    /// Nodes in this epoch's menu: what a translation from it must map.
    let nodeCount: Int
    private let successor = Mutex<(translation: MenuTranslation, epoch: MenuEpoch)?>(nil)
    /// The menu before this one, while this epoch is the newest.
    private let previous: Mutex<ReloadSource?>

    fileprivate init(number: Int, nodeCount: Int, reloadSource: ReloadSource? = nil) {
        self.number = number
        self.nodeCount = nodeCount
        previous = Mutex(reloadSource)
    }

    fileprivate func link(to next: MenuEpoch, translation: MenuTranslation) {
        precondition(
            translation.fromNodeCount == nodeCount && translation.toNodeCount == next.nodeCount,
            "a translation links the menus of consecutive epochs")
        successor.withLock { link in
            precondition(link == nil, "epoch \(number) is already followed by epoch \(link!.epoch.number)")
            link = (translation, next)
        }
        previous.withLock { $0 = nil }
    }

    /// The menu before this one, while this epoch is the newest; nil after the next reload.
    fileprivate var reloadSource: ReloadSource? { previous.withLock { $0 } }

    /// The menu before this one while this epoch keeps it (see ``forgetPreviousMenu()``): what a
    /// store that holds states by id decodes a reload entry's older state on.
    package var previousMenu: Menu? { reloadSource?.menu }

    /// Frees the menu before this one (and the splices computed from it) before the next reload:
    /// from now on a session's reload entry to this menu cannot be computed (its feed answers
    /// `410` from before it).
    package func forgetPreviousMenu() {
        previous.withLock { $0 = nil }
    }

    /// The translations from this epoch to `target`, in order; nil when `target` is not this
    /// epoch or a later one. O(epochs between them).
    func translations(to target: MenuEpoch) -> [MenuTranslation]? {
        var steps: [MenuTranslation] = []
        var epoch = self
        while epoch !== target {
            guard epoch.number < target.number, let link = epoch.successor.withLock({ $0 }) else { return nil }
            steps.append(link.translation)
            epoch = link.epoch
        }
        return steps
    }
}

extension SessionState {
    /// This state, built against the menu of `epoch`, carried over to `generation`'s menu by the
    /// reload rule: each changed group keeps its state by id; ids that left the menu or stopped
    /// being groups are dropped; a group whose default changed keeps the explicit choice.
    /// O(k · (depth + log k)) for k changed groups, independent of the menu's size.
    package func rebased(from epoch: MenuEpoch, to generation: MenuGeneration) -> SessionState {
        guard epoch !== generation.epoch else { return self }
        guard let steps = epoch.translations(to: generation.epoch) else {
            preconditionFailure(
                "a state of epoch \(epoch.number) cannot be carried back to epoch \(generation.epoch.number)")
        }
        return carried(through: steps, onto: generation.menu)
    }
}

/// A session's carry-over from one menu to the next, as its history keeps it: the state it had on
/// the older menu. The reload's splices are computed from it only when a client reads them.
///
/// Invariant: `state` belongs to the menu before `to`'s. `to` is weak: a mark left in a history
/// keeps no epoch (and through it no chain of translations) alive. Memory: the state (shared with
/// nothing once the session writes again) and a weak reference.
package struct ReloadMark: Sendable, Equatable {
    private weak let to: MenuEpoch?
    package let state: SessionState

    /// The carry-over to `to`'s menu of a session that had `state` on the menu before it.
    package init(to: MenuEpoch, state: SessionState) {
        self.to = to
        self.state = state
    }

    package static func == (a: ReloadMark, b: ReloadMark) -> Bool {
        a.to === b.to && a.state == b.state
    }

    /// Whether ``listingDiff(on:)`` can still answer on the newest menu: false once a later
    /// reload or the end of `--reload-entry-window` freed the menu before. O(1).
    package var canBeAnswered: Bool { to?.reloadSource != nil }

    /// The menu before the reload, while it is kept and `generation` is the mark's newer menu;
    /// nil otherwise. O(1).
    package func olderMenu(on generation: MenuGeneration) -> Menu? {
        guard let to, generation.epoch === to else { return nil }
        return to.reloadSource?.menu
    }

    /// The splices from the session's rows on the older menu to its rows on `generation`'s menu
    /// (its state carried over by the reload rule); nil when `generation` is not the mark's newer
    /// menu or the older menu is no longer kept (a later reload freed it): the client starts over.
    /// O(rows · log rows) on first use; later reads of the same state are a cache hit.
    package func listingDiff(on generation: MenuGeneration) -> ListingDiff? {
        guard let to, generation.epoch === to, let source = to.reloadSource else { return nil }
        return source.diff(of: state) {
            ListingDiff.between(
                FlattenedView(menu: source.menu, state: state),
                FlattenedView(
                    menu: generation.menu, state: state.carried(through: [source.translation], onto: generation.menu)))
        }
    }
}

/// The menu a reload replaced, its translation to the new one, and the splices computed from it for the states sessions had on it.
///
/// Invariant: held only by the newest epoch. Cost: a diff is computed under the lock, so sessions
/// that had the same state (most keep the default) share one computation; the cache keeps the
/// last ``cacheLimit`` states.
private final class ReloadSource: Sendable {
    let menu: Menu
    /// From ``menu`` to the newest epoch's menu (shared with the epochs' link).
    let translation: MenuTranslation
    private let cache = Mutex<[(state: SessionState, diff: ListingDiff)]>([])
    static let cacheLimit = 16

    init(menu: Menu, translation: MenuTranslation) {
        self.menu = menu
        self.translation = translation
    }

    func diff(of state: SessionState, compute: () -> ListingDiff) -> ListingDiff {
        cache.withLock { cache in
            if let hit = cache.firstIndex(where: { $0.state == state }) { return cache[hit].diff }
            let diff = compute()
            if cache.count >= Self.cacheLimit { cache.removeFirst() }
            cache.append((state, diff))
            return diff
        }
    }
}
