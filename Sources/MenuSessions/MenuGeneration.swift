import MenuModel
import Synchronization

/// A menu as the session stores see it: the menu and its place in the order reloads installed
/// menus. A session's ``ExpansionState`` holds positions in one menu, so each stored session
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
    package func succeeded(by menu: Menu) -> MenuGeneration {
        let next = MenuEpoch(number: epoch.number + 1, nodeCount: menu.nodeCount)
        epoch.link(to: next, translation: MenuTranslation(from: self.menu, to: menu))
        return MenuGeneration(menu: menu, epoch: next)
    }
}

/// One place in the order of menus served: a number, and (once a reload has happened) the
/// translation to the next menu and that menu's epoch.
///
/// Invariant: epochs form a chain by ``number``, each linked at most once to its successor. An
/// epoch keeps only translations (a few bytes per node), never a ``Menu``: a menu is freed once no
/// request holds its generation, while sessions not yet rebased keep just their epoch, and through
/// the chain the translations to the current menu. Once every session on an epoch has been
/// rebased, nothing refers to it and the chain behind the oldest live epoch is freed.
package final class MenuEpoch: Sendable {
    /// 1 for the menu loaded at start-up, +1 per reload.
    package let number: Int
    /// Nodes in this epoch's menu: what a translation from it must map.
    let nodeCount: Int
    private let successor = Mutex<(translation: MenuTranslation, epoch: MenuEpoch)?>(nil)

    init(number: Int, nodeCount: Int) {
        self.number = number
        self.nodeCount = nodeCount
    }

    fileprivate func link(to next: MenuEpoch, translation: MenuTranslation) {
        precondition(
            translation.fromNodeCount == nodeCount && translation.toNodeCount == next.nodeCount,
            "a translation links the menus of consecutive epochs")
        successor.withLock { link in
            precondition(link == nil, "epoch \(number) is already followed by epoch \(link!.epoch.number)")
            link = (translation, next)
        }
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

extension ExpansionState {
    /// This state, built against the menu of `epoch`, carried over to `generation`'s menu by the
    /// reload rule: each changed group keeps its state by id; ids that left the menu or stopped
    /// being groups are dropped; a group whose default changed keeps the explicit choice.
    /// O(k · (depth + log k)) for k changed groups, independent of the menu's size.
    package func rebased(from epoch: MenuEpoch, to generation: MenuGeneration) -> ExpansionState {
        guard epoch !== generation.epoch else { return self }
        guard let steps = epoch.translations(to: generation.epoch) else {
            preconditionFailure(
                "a state of epoch \(epoch.number) cannot be carried back to epoch \(generation.epoch.number)")
        }
        return carried(through: steps, onto: generation.menu)
    }
}
