import MenuModel

extension SessionCommand {
    /// What ``run(on:maxChangedGroups:)`` did: the change for the client, whether the state
    /// changed (a revision), and each group a toggle, a set or a reveal set with the state it set
    /// it to (what a journal records for them; empty for a bulk command, whose journal record is
    /// the resulting state).
    package struct Outcome: Sendable {
        package var change: CommandChange
        package var changedState: Bool
        package var groupsSet: [(id: String, isExpanded: Bool)]
    }

    /// Applies the command to `view`, turning the model's error into the store's. A change that
    /// would take the state's entries (``SessionState/changedGroupCount``) past
    /// `maxChangedGroups` is undone and refused (`.tooManyChanges`), and so is one that would take
    /// its heap bytes (``SessionState/heapBytes``) past `maxStateBytes` (`.sessionTooLarge`);
    /// changes that add neither entries nor bytes are always allowed.
    ///
    /// Cost: a toggle, a set or a reveal O(depth · (log m + s)), as ``FlattenedView/setExpanded(_:_:)``,
    /// and whether it changed the state is read off the entry count in O(1) (a flip always moves
    /// it; a reveal changed it exactly when it opened a group). A bulk command keeps the state
    /// before it (O(1), copied on write) and compares: O(k) for k entries, which it clears anyway.
    package func run(
        on view: inout FlattenedView, maxChangedGroups: Int,
        maxStateBytes: Int = .max
    ) throws(SessionStoreError) -> Outcome {
        let before = view.state.changedGroupCount
        let bytesBefore = maxStateBytes == .max ? 0 : view.state.heapBytes
        /// Whether the state now breaks a cap it kept before the change.
        func overCap(_ state: SessionState) -> SessionStoreError? {
            if state.changedGroupCount > max(before, maxChangedGroups) {
                return .tooManyChanges(limit: maxChangedGroups)
            }
            if maxStateBytes != .max, state.heapBytes > max(bytesBefore, maxStateBytes) {
                return .sessionTooLarge(limit: maxStateBytes)
            }
            return nil
        }
        switch self {
        case .select, .selectAll:
            return try runSelection(on: &view, overCap: overCap)
        case .setAll(let mode):
            let changed = !view.state.hasSameExpansion(as: SessionState(base: mode))
            return Outcome(change: .all(view.setAll(mode)), changedState: changed, groupsSet: [])
        case .setSubtree(let groupID, let isExpanded):
            let old = view.state
            let change: ExpansionChange
            do { change = try view.setExpanded(groupID, isExpanded, recursive: true) } catch { throw .expansion(error) }
            if let refusal = overCap(view.state) {
                view = FlattenedView(menu: view.menu, state: old)
                throw refusal
            }
            return Outcome(change: .group(change), changedState: view.state != old, groupsSet: [])
        case .toggle, .set, .reveal:
            let change: ExpansionChange
            var revealed: [Menu.Node] = []
            do {
                switch self {
                case .toggle(let groupID): change = try view.toggle(groupID)
                case .set(let groupID, let isExpanded): change = try view.setExpanded(groupID, isExpanded)
                case .reveal(let nodeID):
                    if let node = view.menu.node(withID: nodeID) { revealed = view.collapsedAncestors(of: node) }
                    change = try view.reveal(nodeID)
                case .setSubtree, .setAll, .select, .selectAll: preconditionFailure("handled above")
                }
            } catch {
                throw .expansion(error)
            }
            let groupsSet: [(id: String, isExpanded: Bool)] =
                if case .reveal = self {
                    revealed.map { (view.menu.id(of: $0), true) }
                } else {
                    [(change.id, change.isExpanded)]
                }
            if let refusal = overCap(view.state) {
                for group in groupsSet { _ = try? view.setExpanded(group.id, !group.isExpanded) }  // back as it was
                // Arrays that grew for the refused change keep their capacity: give it back.
                if maxStateBytes != .max, view.state.heapBytes > bytesBefore {
                    view = FlattenedView(menu: view.menu, state: view.state.compacted)
                }
                throw refusal
            }
            // A toggle or a set flips one group or none, and a flip always moves the count; a
            // reveal changed the state exactly when it opened a group (its splice), even if its
            // flips added and removed as many entries.
            let changed =
                if case .reveal = self { change.change != nil } else { before != view.state.changedGroupCount }
            return Outcome(change: .group(change), changedState: changed, groupsSet: groupsSet)
        }
    }
}

extension SessionCommand {
    /// A selection write: refused, with the state as it was, when it would take a group past its
    /// `maxSelect` (``SelectionState/exceededMaximum(comparedWith:around:in:)``) or the state past
    /// a cap. O(k + e log e + r log k) for k toggles, e excluded leaves and r ruled groups.
    fileprivate func runSelection(
        on view: inout FlattenedView, overCap: (SessionState) -> SessionStoreError?
    ) throws(SessionStoreError) -> Outcome {
        let menu = view.menu
        let before = view.state.selection
        func nodes(_ ids: [String]) -> [Menu.Node] { ids.compactMap { menu.node(withID: $0) } }
        let change: SelectionChange
        switch self {
        case .select(let id, let selected, let excluded):
            do { change = try view.setSelected(id, selected, excluding: nodes(excluded)) } catch {
                throw .expansion(error)
            }
        case .selectAll(let selected, let excluded):
            change = view.setAllSelected(selected, excluding: nodes(excluded))
        default:
            preconditionFailure("not a selection command")
        }
        if let broken = view.state.selection.exceededMaximum(comparedWith: before, around: change.node, in: menu) {
            view.setSelection(before)
            throw .selectionAboveMaximum(groupID: menu.id(of: broken.group), max: broken.max, selected: broken.selected)
        }
        if let refusal = overCap(view.state) {
            view.setSelection(before)
            throw refusal
        }
        return Outcome(change: .selection(change), changedState: change.changed, groupsSet: [])
    }
}
