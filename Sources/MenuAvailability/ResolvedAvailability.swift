import MenuModel

/// An ``AvailabilityOverlay`` resolved on one menu: what each node shows.
///
/// - A node with an entry of its own shows it.
/// - A node without one, under a group with an entry, shows the nearest such group's (pausing a
///   group pauses everything in it that has no entry of its own).
/// - Any other group whose rows all show an availability shows a computed one: the rows' state
///   when they all show one (`sold_out`, `paused` or `closed`), else `paused`; `until` the earliest of the rows' ends (when the
///   first comes back; none if none ends by itself); no reason.
///
/// Invariant: built from one overlay revision and one menu, never changed. Cost: building is
/// O(k · (log k + depth)) for k entries, whatever the menu's size; ``availability(of:)`` is one
/// hash lookup, plus a walk up the node's ancestors (O(depth)) only when some group has an entry.
/// Memory: one dictionary entry per node that shows an availability of its own or computed.
public struct ResolvedAvailability: Sendable {
    public let revision: Int
    private let shown: [Menu.Node: Availability]
    /// Groups with an entry of their own: nodes without one look up for them.
    private let explicitGroups: Set<Menu.Node>
    private let menu: Menu

    /// Nothing unavailable.
    public init(menu: Menu) {
        self.init(AvailabilityOverlay(), on: menu)
    }

    public init(_ overlay: AvailabilityOverlay, on menu: Menu) {
        self.menu = menu
        revision = overlay.revision
        var shown: [Menu.Node: Availability] = [:]
        var explicitGroups = Set<Menu.Node>()
        var entries: [(node: Menu.Node, availability: Availability)] = []
        for (id, availability) in overlay.shownEntries {
            guard let node = menu.node(withID: id) else { continue }
            shown[node] = availability
            entries.append((node, availability))
            if menu.isGroup(node) { explicitGroups.insert(node) }
        }
        entries.sort { $0.node < $1.node }
        // Each entry's region: the rows of its subtree that show it (not those under a nested
        // entry). Preorder with a stack of the enclosing group entries finds each one's parent entry.
        var regionRows = entries.map { menu.leafCount(of: $0.node) }
        var enclosing: [(index: Int, end: Menu.Node)] = []
        for (index, entry) in entries.enumerated() {
            while let top = enclosing.last, top.end <= entry.node { enclosing.removeLast() }
            if let parent = enclosing.last { regionRows[parent.index] -= regionRows[index] }
            if menu.isGroup(entry.node) { enclosing.append((index, menu.subtreeEnd(entry.node))) }
        }
        struct Tally {
            var rows = 0
            /// The one state every row shows; nil once two differ.
            var state: AvailabilityState?
            var mixed = false
            var earliest: Timestamp?
        }
        var tallies: [Menu.Node: Tally] = [:]
        for (index, entry) in entries.enumerated() where regionRows[index] > 0 {
            var ancestor = menu.parent(of: entry.node)
            while let group = ancestor {
                var tally = tallies[group, default: Tally()]
                tally.rows += regionRows[index]
                if tally.state == nil && !tally.mixed {
                    tally.state = entry.availability.state
                } else if tally.state != entry.availability.state {
                    (tally.state, tally.mixed) = (nil, true)
                }
                if let until = entry.availability.until { tally.earliest = min(tally.earliest ?? until, until) }
                tallies[group] = tally
                ancestor = menu.parent(of: group)
            }
        }
        func isCovered(_ group: Menu.Node) -> Bool {
            var ancestor = menu.parent(of: group)
            while let above = ancestor {
                if explicitGroups.contains(above) { return true }
                ancestor = menu.parent(of: above)
            }
            return false
        }
        for (group, tally) in tallies where shown[group] == nil {
            let rows = menu.leafCount(of: group)
            guard rows > 0, tally.rows == rows, !isCovered(group) else { continue }
            shown[group] = Availability(state: tally.state ?? .paused, until: tally.earliest)
        }
        self.shown = shown
        self.explicitGroups = explicitGroups
    }

    /// Nodes that show an availability (their own, computed, or not counting inherited ones).
    public var count: Int { shown.count }

    /// What `node` shows: nil when it is available.
    public func availability(of node: Menu.Node) -> Availability? {
        source(of: node).flatMap { shown[$0] }
    }

    /// The node whose availability `node` shows: itself (an entry of its own, or computed), the
    /// nearest group above it with an entry, or nil when it is available.
    public func source(of node: Menu.Node) -> Menu.Node? {
        if shown[node] != nil { return node }
        guard !explicitGroups.isEmpty else { return nil }
        var ancestor = menu.parent(of: node)
        while let group = ancestor {
            if explicitGroups.contains(group) { return group }
            ancestor = menu.parent(of: group)
        }
        return nil
    }

    /// What a row shows, as its JSON says it: the availability and where it comes from.
    public struct Shown: Sendable, Equatable {
        public var availability: Availability
        public var origin: ShownOrigin
    }

    /// Where a row's availability comes from.
    public enum ShownOrigin: Sendable, Equatable {
        case own
        case computed
        /// The entry of the group `from`, above the node.
        case inherited(from: Menu.Node)
    }

    /// What `node`'s row shows; nil when it is available. As ``availability(of:)``.
    public func shown(_ node: Menu.Node) -> Shown? {
        guard let source = source(of: node), let availability = shown[source] else { return nil }
        if source != node { return Shown(availability: availability, origin: .inherited(from: source)) }
        return Shown(
            availability: availability,
            origin: menu.isGroup(node) && !explicitGroups.contains(node) ? .computed : .own)
    }

    /// How a node shows what it shows.
    public enum Origin: Sendable, Equatable {
        /// An entry of the overlay for this node.
        case own
        /// Computed for a group whose rows all show an availability.
        case computed
    }

    /// Calls `body` once per node that shows an availability of its own or computed (not per
    /// node that inherits one), in no particular order; `coversSubtree` is true for a group with
    /// an entry of its own, which every node under it without one shows too. O(count).
    public func forEachShown(
        _ body: (_ node: Menu.Node, _ availability: Availability, _ origin: Origin, _ coversSubtree: Bool) -> Void
    ) {
        for (node, availability) in shown {
            let covers = explicitGroups.contains(node)
            body(node, availability, covers || !menu.isGroup(node) ? .own : .computed, covers)
        }
    }

    /// The outermost nodes at or under `node` (0: the whole menu) whose every leaf is unavailable
    /// (a node showing an availability of its own or computed, whose subtree shows it or its own),
    /// ascending, none under another: what a selection of `node` leaves out. O(count · depth).
    public func unavailableRoots(under node: Menu.Node) -> [Menu.Node] {
        let end = node == 0 ? menu.nodeCount + 1 : menu.subtreeEnd(node)
        var roots: [Menu.Node] = []
        for candidate in shown.keys where candidate >= node && candidate < end {
            var ancestor = menu.parent(of: candidate)
            var covered = false
            while let group = ancestor, group >= node {
                if shown[group] != nil {
                    covered = true
                    break
                }
                ancestor = menu.parent(of: group)
            }
            if !covered { roots.append(candidate) }
        }
        return roots.sorted()
    }

    /// The menu this was resolved on.
    public var resolvedMenu: Menu { menu }
}

extension ResolvedAvailability {
    /// The outermost nodes that leave the listing now: each shows an availability (its own, a
    /// group's above it, or computed) and its `whenUnavailable` is `hide`
    /// (``Menu/hidesWhenUnavailable(_:)``); ascending, none under another. None when no node of
    /// the menu hides. O(count · log count) plus, for each group with an entry of its own that
    /// does not hide, a scan of its subtree for nodes that do.
    public func hiddenRoots() -> [Menu.Node] {
        guard menu.hidesAnyWhenUnavailable else { return [] }
        var candidates: [Menu.Node] = []
        for node in shown.keys {
            if menu.hidesWhenUnavailable(node) {
                candidates.append(node)
            } else if explicitGroups.contains(node) {
                // Every node under it shows an availability: those that hide leave with theirs.
                var inner = node + 1
                let end = menu.subtreeEnd(node)
                while inner < end {
                    if menu.hidesWhenUnavailable(inner) {
                        candidates.append(inner)
                        inner = menu.subtreeEnd(inner)
                    } else {
                        inner += 1
                    }
                }
            }
        }
        candidates.sort()
        var roots: [Menu.Node] = []
        for node in candidates where roots.last.map({ menu.subtreeEnd($0) <= node }) ?? true {
            roots.append(node)
        }
        return roots
    }
}
