import MenuModel
import MenuSessions
import NaiveReference

/// One session the naive way, for the service-level differential test: its own ``NaiveMenu`` tree
/// (flipped in place, as the seeds did), the session's state written down by its definition (a
/// base mode, marks and flips by id, see ``NaiveExpansionRecord``), a revision counter and the log
/// of every revision's splice. It takes the stores' ``SessionCommand`` and answers their
/// ``CommandChange``, computed the naive way.
///
/// Invariant: every group's `isExpand` in the tree is what the record says for it (``mismatch()``
/// checks it by walking every group); ``revision`` is the number of commands that changed the
/// record, and ``log`` holds one entry per revision, oldest first. Cost: O(n) per command and
/// per check, for n nodes; meant for menus of hundreds of nodes.
package struct NaiveSession {
    package private(set) var menu: NaiveMenu
    package private(set) var record = NaiveExpansionRecord()
    package private(set) var revision = 0
    /// Each revision's splice (nil: a write that changed no visible row), oldest first: entry `k`
    /// took the session from revision `k` to `k + 1`.
    package private(set) var log: [RowChange?] = []
    /// The chosen leaves by id, changed leaf by leaf.
    package private(set) var selected = Set<String>()

    /// The groups with a `maxSelect`, in menu order, with their rule.
    package let maxSelects: [(id: String, max: Int)]

    /// A new session (revision 0, the config's defaults) on its own tree built from `spec`.
    package init(spec: [TreeSpec]) {
        menu = NaiveMenu(spec: spec)
        func rules(_ nodes: [TreeSpec]) -> [(id: String, max: Int)] {
            nodes.flatMap { node in (node.maxSelect.map { [(node.id, $0)] } ?? []) + rules(node.children ?? []) }
        }
        maxSelects = rules(spec)
    }

    /// The rule `command` would break, as the service refuses it: the first group in menu order
    /// whose `maxSelect` the choice would pass while choosing more there than before; nil for a
    /// write it allows (and for any write but a selection, or one naming no node).
    package func selectionRefusal(_ command: SessionCommand) -> (group: String, max: Int, selected: Int)? {
        guard let after = chosen(after: command)?.leaves else { return nil }
        for (id, max) in maxSelects {
            guard let group = menu.item(withID: id) else { continue }
            let leaves = Self.leafIDs(under: group)
            let (now, then) = (leaves.intersection(after).count, leaves.intersection(selected).count)
            if now > max && now > then { return (id, max, now) }
        }
        return nil
    }

    /// Applies `command` to the tree and to the record; nil (and nothing changed) when it names no
    /// node, or a row where it needs a group. A command that leaves the record as it was is a
    /// no-op: no revision, no log entry.
    package mutating func apply(_ command: SessionCommand) -> CommandChange? {
        let before = record
        let selectedBefore = selected
        let answer: CommandChange?
        switch command {
        case .toggle(groupID: let id):
            guard let group = group(id) else { return nil }
            record.flip(id)
            answer = menu.setExpanded(id, !group.isExpand).map(CommandChange.group)
        case .set(groupID: let id, isExpanded: let expanded):
            guard let group = group(id) else { return nil }
            if group.isExpand != expanded { record.flip(id) }
            answer = menu.setExpanded(id, expanded).map(CommandChange.group)
        case .setSubtree(groupID: let id, isExpanded: let expanded):
            guard let group = group(id) else { return nil }
            var subtree: [NaiveMenuItem] = []
            func collect(_ item: NaiveMenuItem) {
                subtree.append(item)
                item.children.forEach(collect)
            }
            collect(group)
            for item in subtree {
                record.marks[item.id] = nil
                record.flips.remove(item.id)
            }
            let mode: ExpansionMode = expanded ? .expanded : .collapsed
            if mode != record.mode(at: group.parent!) { record.marks[id] = mode }
            answer = menu.setExpandedRecursively(id, expanded).map(CommandChange.group)
        case .setAll(let mode):
            record = NaiveExpansionRecord(base: mode)
            answer = .all(menu.setAll(mode))
        case .reveal(nodeID: let id):
            guard let ancestors = menu.ancestors(of: id) else { return nil }
            for group in ancestors.dropFirst() where !group.isExpand { record.flip(group.id) }
            answer = menu.reveal(id).map(CommandChange.group)
        case .select(let id, let choose, _):
            guard let (after, under) = chosen(after: command) else { return nil }
            selected = after
            answer = selectionAnswer(id: id, choose, count: under.intersection(after).count, before: selectedBefore)
        case .selectAll(let choose, _):
            guard let (after, under) = chosen(after: command) else { return nil }
            selected = after
            answer = selectionAnswer(id: nil, choose, count: under.intersection(after).count, before: selectedBefore)
        }
        if record != before || selected != selectedBefore {
            revision += 1
            log.append(answer?.splice)
        }
        return answer
    }

    /// This session carried over a reload onto the menu of `spec` by the reload rule, stated by id:
    /// on a fresh session of the new menu, the base set; each mark whose id still names a group set
    /// recursively, outer marks first; each flipped group that still is one set to the state it
    /// had; and the selection `selection` (the service's compact form, which ``leaves(of:)`` must
    /// find equal to this session's) kept by id, so a leaf is chosen when `all` is, flipped by each
    /// toggled id that is it or one of its groups. The reload is one revision of a session the
    /// service holds (`counted`), logged as nil: its splices are the service's, checked by replay.
    package func reloaded(onto spec: [TreeSpec], selection: PortableSelection, counted: Bool) -> NaiveSession {
        var next = NaiveSession(spec: spec)
        _ = next.apply(.setAll(record.base))
        for group in next.menu.preorder() where group.isGroup {
            guard let mode = record.marks[group.id] else { continue }
            _ = next.apply(.setSubtree(groupID: group.id, isExpanded: mode == .expanded))
        }
        for group in menu.preorder() where group.isGroup && record.flips.contains(group.id) {
            guard next.group(group.id) != nil else { continue }
            _ = next.apply(.set(groupID: group.id, isExpanded: group.isExpand))
        }
        next.selected = Self.leaves(of: selection, in: next.menu)
        next.revision = revision + (counted ? 1 : 0)
        next.log = log + (counted ? [nil] : [])
        return next
    }

    /// The leaves `selection` chooses in `menu`, by its definition: a leaf is chosen when `all`
    /// is, flipped once by each toggled id that is the leaf or one of its groups. O(n · depth).
    package static func leaves(of selection: PortableSelection, in menu: NaiveMenu) -> Set<String> {
        let toggled = Set(selection.toggled)
        var chosen = Set<String>()
        func walk(_ item: NaiveMenuItem, _ inherited: Bool) {
            let here = toggled.contains(item.id) ? !inherited : inherited
            if !item.isGroup {
                if here { chosen.insert(item.id) }
                return
            }
            for child in item.children { walk(child, here) }
        }
        for child in menu.root.children { walk(child, selection.all) }
        return chosen
    }

    /// The chosen leaves after the selection `command`, leaf set by leaf set, and the leaves under
    /// the node it names (the whole menu for `selectAll`); nil for any other command, or one
    /// naming no node.
    private func chosen(after command: SessionCommand) -> (leaves: Set<String>, under: Set<String>)? {
        switch command {
        case .select(let id, let choose, let excluded):
            guard let item = menu.item(withID: id) else { return nil }
            let under = Self.leafIDs(under: item)
            return (choose ? selected.union(under.subtracting(excluded)) : selected.subtracting(under), under)
        case .selectAll(let choose, let excluded):
            let under = Self.leafIDs(under: menu.root)
            return (choose ? under.subtracting(excluded) : [], under)
        default:
            return nil
        }
    }

    /// A selection's answer as far as the oracle knows it: the node, the state asked for, whether
    /// any leaf changed and the leaves chosen under it (the rows are the service's to place).
    private func selectionAnswer(id: String?, _ choose: Bool, count: Int, before: Set<String>) -> CommandChange {
        .selection(
            SelectionChange(
                id: id, node: 0, selected: choose, changed: selected != before, rows: RowRange(at: 0, count: 0),
                selectedCount: count))
    }

    /// The ids of the leaves under `item` at any depth (itself for a leaf), one by one.
    package static func leafIDs(under item: NaiveMenuItem) -> Set<String> {
        item.isGroup ? item.children.reduce(into: Set()) { $0.formUnion(leafIDs(under: $1)) } : [item.id]
    }

    /// Whether the leaf `id` is chosen, or how many leaves under the group `id` are.
    package func selection(of id: String) -> (selected: Bool, count: Int) {
        guard let item = menu.item(withID: id) else { return (false, 0) }
        return item.isGroup
            ? (false, Self.leafIDs(under: item).intersection(selected).count) : (selected.contains(id), 0)
    }

    /// The first group whose `isExpand` in the tree is not what the record says (nil: they agree),
    /// found by walking every group.
    package func mismatch() -> String? {
        for item in menu.preorder() where item.isGroup && item.isExpand != record.isExpanded(item) {
            return
                "group \(item.id) is \(item.isExpand ? "expanded" : "collapsed") in the tree, not as the record \(record) says"
        }
        return nil
    }

    /// The group with `id`; nil for an unknown id or a row's.
    private func group(_ id: String) -> NaiveMenuItem? {
        guard let item = menu.item(withID: id), item.isGroup else { return nil }
        return item
    }
}

/// A session's state by its definition, kept by id: a base mode for the whole tree, marks that set
/// another mode for one group's subtree (never the mode already in force at the group's parent),
/// and the groups flipped against the mode in force at them (the nearest mark on or above a group,
/// else the base). Two records are equal exactly when the sessions hold the same state: what a
/// revision counts.
package struct NaiveExpansionRecord: Sendable, Equatable, CustomStringConvertible {
    package var base: ExpansionMode = .default
    package var marks: [String: ExpansionMode] = [:]
    package var flips: Set<String> = []

    package init(base: ExpansionMode = .default) { self.base = base }

    mutating func flip(_ id: String) {
        if flips.remove(id) == nil { flips.insert(id) }
    }

    /// The mode in force at `item` (the root: the base), by walking up to the nearest mark.
    package func mode(at item: NaiveMenuItem) -> ExpansionMode {
        var current: NaiveMenuItem? = item
        while let node = current, node.parent != nil {
            if let mode = marks[node.id] { return mode }
            current = node.parent
        }
        return base
    }

    /// Whether the record expands `group`: its mode's choice, unless it is flipped.
    package func isExpanded(_ group: NaiveMenuItem) -> Bool {
        let byMode =
            switch mode(at: group) {
            case .default: group.isExpandedByDefault
            case .expanded: true
            case .collapsed: false
            }
        return byMode != flips.contains(group.id)
    }

    package var description: String {
        "base \(base), marks \(marks.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }), flips \(flips.sorted())"
    }
}
