/// Where each group of one menu went in the next, by id: what a reload leaves behind so sessions
/// built against the old menu can be rebased later without it.
///
/// Invariant: `targets[n - 1]`, for each node n of the old menu (1...fromNodeCount), holds in
/// bit 31 whether n is expanded by default in the old menu and in its low 31 bits the new node
/// with n's id when that node is a group, or 0 (the root's position, never a node) when the id is
/// gone, names a row in the new menu, or n is itself a row (a state never flips a row).
/// It keeps no reference to either menu: after a reload only this table (4 bytes per old node)
/// and the two menus' versions stay alive, so the old menu is freed while sessions still wait.
///
/// Cost: building is one id lookup per old group (``Menu/node(withID:)``), O(old nodes) in all.
public struct MenuTranslation: Sendable {
    private let targets: [UInt32]
    /// The old menu's ``Menu/version``, so a chain can be checked link by link.
    public let fromVersion: String
    /// The new menu's ``Menu/version``.
    public let toVersion: String
    /// Nodes in the new menu.
    public let toNodeCount: Int

    /// Nodes in the old menu: the table's length.
    public var fromNodeCount: Int { targets.count }

    /// Heap bytes the table holds (the versions' few bytes aside).
    public var memoryBytes: Int { targets.capacity * MemoryLayout<UInt32>.stride }

    static let expandedBit: UInt32 = 1 << 31
    static let nodeMask: UInt32 = expandedBit - 1

    public init(from old: Menu, to new: Menu) {
        targets = [UInt32](unsafeUninitializedCapacity: old.nodeCount) { buffer, initialized in
            for node in old.nodes {
                var slot: UInt32 = 0
                if old.isGroup(node) {
                    if old.isExpandedByDefault(node) { slot = Self.expandedBit }
                    if let target = new.node(withID: old.id(of: node)), new.isGroup(target) { slot |= UInt32(target) }
                }
                buffer[node - 1] = slot
            }
            initialized = old.nodeCount
        }
        fromVersion = old.version
        toVersion = new.version
        toNodeCount = new.nodeCount
    }

    private init(targets: [UInt32], fromVersion: String, toVersion: String, toNodeCount: Int) {
        self.targets = targets
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.toNodeCount = toNodeCount
    }

    /// One table doing what this one and then `next` do to any state, so a store can keep one
    /// table per menu still referenced instead of a growing chain: a group changed in this
    /// translation's old menu has its explicit state fixed (its default there, flipped), so whether
    /// `next` still carries it depends on the group alone. O(fromNodeCount); no menu needed.
    /// That explicit state is the one of a state with base `.default` and no marks: carrying a
    /// state with another base or with marks through a composed table may drop a flip that the
    /// two tables one after the other keep (pass the chain to ``SessionState/carried(through:onto:)``).
    ///
    /// - Precondition: `next` starts at the menu this translation ends at.
    public func followed(by next: MenuTranslation) -> MenuTranslation {
        precondition(
            toVersion == next.fromVersion && toNodeCount == next.fromNodeCount,
            "translations do not link up: one ends at menu \(toVersion) (\(toNodeCount) nodes), "
                + "the next starts at \(next.fromVersion) (\(next.fromNodeCount) nodes)")
        let composed = targets.map { slot -> UInt32 in
            let expanded = slot & Self.expandedBit
            let middle = slot & Self.nodeMask
            guard middle != 0 else { return expanded }
            let (wasExpandedInMiddle, target) = next.target(of: Int32(middle))
            // Its explicit state (the old default, flipped) equals the middle menu's default: not
            // changed there, so not carried on.
            guard (expanded != 0) == wasExpandedInMiddle, let target else { return expanded }
            return expanded | UInt32(target)
        }
        return MenuTranslation(
            targets: composed, fromVersion: fromVersion, toVersion: next.toVersion, toNodeCount: next.toNodeCount)
    }

    /// Old group `node`'s default expansion in the old menu and its node in the new one (nil: dropped).
    @inline(__always) func target(of node: Int32) -> (wasExpandedByDefault: Bool, node: Int32?) {
        let slot = targets[Int(node) - 1]
        let target = Int32(bitPattern: slot & Self.nodeMask)
        return (slot & Self.expandedBit != 0, target == 0 ? nil : target)
    }
}

extension SessionState {
    /// This state carried by id through one or more reloads onto `menu`: what each reload does to a
    /// session, in one pass. The state was built against the first translation's old menu; the
    /// result belongs to `menu`, the last translation's new menu (no translations: this state,
    /// which must then belong to `menu`).
    ///
    /// The base mode is kept. A mark follows its group's id and keeps its mode; a mark whose id is
    /// gone, or names a row now, is dropped for good, and the groups it covered follow the mode
    /// in force above it from then on, except the flipped ones, which keep their explicit state as
    /// every flipped group does. At each reload every flipped group keeps its explicit state (the
    /// state it shows in the session) and follows its id: a group whose id is gone, or names a row
    /// now, is dropped for good; in the last menu a group whose explicit state equals the one its
    /// mode gives it there is no longer flipped. In a menu between the first and the last, a state
    /// with no marks left also drops a group whose explicit state equals its base mode's there (so
    /// from then on it follows the base), which makes carrying through [a, b] equal carrying through
    /// [a] then [b]; with marks left that comparison would need the intermediate menu's tree (which
    /// marks cover the group there), so such a state keeps its flips to the last menu. Only `menu`
    /// is needed; each intermediate menu's defaults come from the next table, and the marks'
    /// subtree ends (kept in the state) give the mode at each flip in the first menu.
    ///
    /// The selection is carried by id too (``SelectionState/carried(to:dropped:)``).
    ///
    /// Cost: O(s · (k + j) + (k + j) · (d + log(k + j))) for k flips, j marks, s translations and
    /// `menu`'s depth d: one table lookup per entry per step, one sort, and one pass up the new
    /// paths to build the overlay (``init(base:marks:explicit:in:)``). Never O(menu size).
    ///
    /// - Precondition: the chain links up (each translation starts at the menu the previous one
    ///   ends at, checked by version and node count), the last one ends at `menu`, and this
    ///   state's groups exist in the first translation's old menu.
    public func carried(through translations: some Sequence<MenuTranslation>, onto menu: Menu) -> SessionState {
        // (node, explicit state) of the flipped groups and (node, mode) of the marks so far, in the
        // menu the last step ends at.
        var carried: [(node: Int32, isExpanded: Bool)] = []
        var carriedMarks: [(node: Int32, mode: ExpansionMode)] = []
        var previous: MenuTranslation?
        for translation in translations {
            if let previous {
                precondition(
                    previous.toVersion == translation.fromVersion && previous.toNodeCount == translation.fromNodeCount,
                    "translations do not link up: one ends at menu \(previous.toVersion) (\(previous.toNodeCount) nodes), "
                        + "the next starts at \(translation.fromVersion) (\(translation.fromNodeCount) nodes)")
                let comparesWithBase = carriedMarks.isEmpty
                carried = carried.compactMap { group in
                    let (wasExpanded, target) = translation.target(of: group.node)
                    // Equal to that menu's base mode: not flipped there, so not carried further.
                    guard let target,
                        !comparesWithBase || group.isExpanded != base.expands(expandedByDefault: wasExpanded)
                    else { return nil }
                    return (target, group.isExpanded)
                }
                carriedMarks = carriedMarks.compactMap { mark in
                    translation.target(of: mark.node).node.map { ($0, mark.mode) }
                }
            } else {
                let last = max(flipped.last ?? 0, marks.last?.node ?? 0)
                precondition(
                    Int(last) <= translation.fromNodeCount,
                    "the state has group \(last); the translation's old menu has \(translation.fromNodeCount) nodes")
                carried = explicitStates { translation.target(of: $0).wasExpandedByDefault }.compactMap { group in
                    translation.target(of: group.node).node.map { ($0, group.isExpanded) }
                }
                carriedMarks = marks.compactMap { mark in translation.target(of: mark.node).node.map { ($0, mark.mode) }
                }
            }
            previous = translation
        }
        guard let previous else {
            let last = max(flipped.last ?? 0, marks.last?.node ?? 0)
            precondition(
                Int(last) <= menu.nodeCount, "the state has group \(last); the menu has \(menu.nodeCount) nodes")
            return self
        }
        precondition(
            previous.toVersion == menu.version && previous.toNodeCount == menu.nodeCount,
            "the translations end at menu \(previous.toVersion) (\(previous.toNodeCount) nodes), "
                + "not at this menu \(menu.version) (\(menu.nodeCount) nodes)")
        carried.sort { $0.node < $1.node }
        carriedMarks.sort { $0.node < $1.node }
        var state = SessionState(base: base, marks: carriedMarks, explicit: carried, in: menu)
        // The selection follows its toggles' ids, groups and leaves alike; a toggle whose id is
        // gone is dropped (its leaves go back to what encloses them).
        var dropped: [String] = []
        state.selection = selection.carried(to: menu, dropped: &dropped)
        return state
    }
}
