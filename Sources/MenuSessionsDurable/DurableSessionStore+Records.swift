import MenuModel
import MenuSessions

/// The journal records the store writes for each kind of change.
extension DurableSessionStore {
    /// What the journal keeps of `command`, which changed session `id`'s state to `state` (on
    /// `menu`, of reload count `reloads`) at `revision`: a bulk command's whole state (one record,
    /// whatever number of groups it affected), else a `groupSet` for each group it set.
    static func events(
        of command: SessionCommand, _ outcome: SessionCommand.Outcome, _ state: SessionState,
        in menu: MenuGeneration, of id: SessionID, revision: Int, reloads: Int
    ) -> [DurableRecord.Event] {
        command.isBulk
            ? DurableRecord.stateEvents(of: id, state.portable(in: menu.menu), revision: revision, reloads: reloads)
            : groupSets(outcome.groupsSet, of: id, revision: revision, reloads: reloads)
    }

    /// A `groupSet` event of session `id` for each group.
    static func groupSets(
        _ groups: [(id: String, isExpanded: Bool)], of id: SessionID, revision: Int, reloads: Int
    ) -> [DurableRecord.Event] {
        groups.map { .groupSet(id, group: $0.id, isExpanded: $0.isExpanded, revision: revision, reloads: reloads) }
    }

    /// `events` encoded as journal records stamped `time`.
    static func records(_ events: [DurableRecord.Event], time: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        for event in events { DurableRecord.append(event, time: time, to: &bytes) }
        return bytes
    }
}
