import MenuModel
import MenuSessions

/// The revision rules run against any ``SessionStore``, written once for both stores' tests: each
/// step's name and the revision the store answered (or the error it threw), in order. `parent` is
/// a group expanded by default with the group `child` among its children; the store's menu must
/// have them; `next` is the menu a reload installs (another version with both). The tests compare
/// the trail with ``expectedTrail(of:)``.
package enum RevisionScenario {
    package static func trail(of store: any SessionStore, parent: String, child: String, reloadingTo next: Menu)
        -> [String]
    {
        var trail: [String] = []
        func step(_ name: String, _ body: () throws(SessionStoreError) -> Int) {
            do throws(SessionStoreError) {
                trail.append("\(name) \(try body())")
            } catch {
                trail.append("\(name) \(error)")
            }
        }
        guard let id = try? store.create() else { return ["create failed"] }
        step("created") { () throws(SessionStoreError) in try store.snapshot(of: id).revision }
        step("collapse parent") { () throws(SessionStoreError) in
            try store.apply(.toggle(groupID: parent), to: id).revision
        }
        step("collapse parent again (no-op)") { () throws(SessionStoreError) in
            try store.apply(.set(groupID: parent, isExpanded: false), to: id).revision
        }
        step("toggle hidden child") { () throws(SessionStoreError) in
            try store.apply(.toggle(groupID: child), to: id).revision
        }
        step("write if at 1") { () throws(SessionStoreError) in
            try store.apply(.toggle(groupID: parent), to: id, if: RevisionCondition(accepting: [1])).revision
        }
        step("read after the refused write") { () throws(SessionStoreError) in try store.snapshot(of: id).revision }
        step("parent still collapsed") { () throws(SessionStoreError) in
            try store.apply(.set(groupID: parent, isExpanded: false), to: id).revision
        }
        step("write if at 1 or 2") { () throws(SessionStoreError) in
            try store.apply(.toggle(groupID: parent), to: id, if: RevisionCondition(accepting: [1, 2])).revision
        }
        step("unknown group") { () throws(SessionStoreError) in
            try store.apply(.toggle(groupID: "no-such-group"), to: id).revision
        }
        // As the service reloads: the menu before kept for reload entries by a store that records them.
        store.adopt(store.currentMenu.succeeded(by: next, keepingPrevious: store.recordsReloads))
        step("read after a reload") { () throws(SessionStoreError) in try store.snapshot(of: id).revision }
        step("new session by a toggle") { () throws(SessionStoreError) in
            try store.apply(.toggle(groupID: parent), to: nil).revision
        }
        step("new session by a no-op") { () throws(SessionStoreError) in
            try store.apply(.set(groupID: parent, isExpanded: true), to: nil).revision
        }
        step("new session if at 0") { () throws(SessionStoreError) in
            try store.apply(.toggle(groupID: parent), to: nil, if: RevisionCondition(accepting: [0])).revision
        }
        step("new session if at 4") { () throws(SessionStoreError) in
            try store.apply(.toggle(groupID: parent), to: nil, if: RevisionCondition(accepting: [4])).revision
        }
        return trail
    }

    /// What `store` must answer: every store the same, except that a store recording reload
    /// entries (``SessionStore/recordsReloads``) counts the reload as a revision.
    package static func expectedTrail(of store: any SessionStore) -> [String] {
        let afterReload = 3 + (store.recordsReloads ? 1 : 0)
        return [
            "created 0", "collapse parent 1", "collapse parent again (no-op) 1", "toggle hidden child 2",
            "write if at 1 \(SessionStoreError.revisionMismatch(current: 2))", "read after the refused write 2",
            "parent still collapsed 2", "write if at 1 or 2 3",
            "unknown group \(SessionStoreError.expansion(.unknownGroup(id: "no-such-group")))",
            "read after a reload \(afterReload)", "new session by a toggle 1", "new session by a no-op 0",
            "new session if at 0 1",
            "new session if at 4 \(SessionStoreError.revisionMismatch(current: 0))"
        ]
    }
}
