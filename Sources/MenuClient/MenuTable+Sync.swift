import Foundation
import Synchronization

/// Keeping the cache at the session's state: revalidation (`If-None-Match`), the changes feed,
/// reloads, and a new session on `unknown_session`. Every function here named `…Locked` runs
/// holding ``MenuTable/writes``.
extension MenuTable {
    /// Brings the table to the session's current state: `GET /count` with `If-None-Match` (304:
    /// nothing to do), else the splices since the table's revision from `GET /changes`, a menu
    /// reload's among them (or every row dropped when the menu changed with no reload entry, or
    /// the feed no longer reaches that far). Returns what it did.
    @discardableResult
    public func sync() async throws(MenuClientError) -> [MenuTableEvent] {
        try await writes.withLock { () async throws(MenuClientError) -> [MenuTableEvent] in try await revalidateLocked()
        }
    }

    /// Drops every cached row and reads the count again.
    @discardableResult
    public func reload() async throws(MenuClientError) -> [MenuTableEvent] {
        try await writes.withLock { () async throws(MenuClientError) -> [MenuTableEvent] in
            try await resetLocked(reason: .requested)
        }
    }

    func revalidateLocked() async throws(MenuClientError) -> [MenuTableEvent] {
        let (version, revision, availability) = state.withLock { ($0.version, $0.revision, $0.availability) }
        let tag = MenuHTTP.entityTag(
            version: version, locale: await session.contentLanguage, availability: availability, revision: revision)
        let (answer, sessionID) = try await session.send("GET", "count", headers: [("If-None-Match", tag)])
        switch answer.status {
        case 304: return []
        case 200:
            let counted = try answer.decode(MenuCountAnswer.self)
            // Another menu: the feed takes the rows there when it has the reload's entry.
            return counted.revision == revision && counted.version == version
                && counted.availabilityRevision ?? 0 == availability ? [] : try await catchUpLocked()
        default:
            if answer.error.code == "unknown_session" { return try await recoverLocked(failedID: sessionID) }
            throw answer.error
        }
    }

    /// Applies the splices after the table's revision from `GET /changes`, in order.
    func catchUpLocked() async throws(MenuClientError) -> [MenuTableEvent] {
        let (revision, availability) = state.withLock { ($0.revision, $0.availability) }
        let (answer, sessionID) = try await session.send(
            "GET", "changes", query: [("since", String(revision)), ("availabilitySince", String(availability))])
        return try await applyFeedLocked(answer, sessionID: sessionID)
    }

    /// Applies a `GET /changes` answer to the table as it is now: entries it has already (a write
    /// here landed meanwhile) are skipped, the rest applied in order, a menu reload's as its
    /// splices; another menu with no reload entry to it, or the history gone, reload the table;
    /// `unknown_session` makes a new session.
    func applyFeedLocked(_ answer: MenuHTTPAnswer, sessionID: String) async throws(MenuClientError)
        -> [MenuTableEvent]
    {
        let version = state.withLock { $0.version }
        switch answer.status {
        case 200:
            let feed = try answer.decode(MenuChangesAnswer.self)
            // Another menu is applied as splices when a reload entry leads to it, else read again.
            if feed.version != version, !feed.changes.contains(where: { $0.reload?.version == feed.version }) {
                return try await resetLocked(reason: .menuChanged(from: version, to: feed.version))
            }
            var events: [MenuTableEvent] = []
            var reloaded = false
            for entry in feed.changes {
                let applied: [MenuTableEvent]?
                if let reload = entry.reload {
                    applied = apply(reload, revision: entry.revision)
                    reloaded = true
                } else if let reconfigured = entry.reconfigured {
                    applied = apply(reconfigured, revision: entry.revision)
                } else {
                    applied = apply(entry.change, revision: entry.revision, changedGroup: .unknown)
                }
                guard let applied else { return events + (try await resetLocked(reason: .requested)) }
                events += applied
            }
            if let change = feed.availability {
                guard let applied = apply(change) else { return events + (try await resetLocked(reason: .historyGone)) }
                events += applied
            }
            if !events.isEmpty || reloaded {
                await refreshLayout()
                await refreshLeafCount()
            }
            return events
        case 410: return try await resetLocked(reason: .historyGone)
        default:
            if answer.error.code == "unknown_session" { return try await recoverLocked(failedID: sessionID) }
            throw answer.error
        }
    }

    /// Applies one splice that took the session to `revision`, which must be the table's next one
    /// (nil, applying nothing, otherwise, or when the splice does not fit: the caller reloads).
    func apply(
        _ splice: MenuSplice?, revision: Int, changedGroup: RowCache.ChangedGroup,
        count: Int? = nil, leafCount: Int? = nil
    ) -> [MenuTableEvent]? {
        state.withLock { state -> [MenuTableEvent]? in
            guard revision == state.revision + 1 else { return revision <= state.revision ? [] : nil }
            state.revision = revision
            if let leafCount { state.leafCount = leafCount }
            guard let splice else { return [] }
            let touched: [Int]
            do { touched = try state.cache.apply(splice, changedGroup: changedGroup) } catch { return nil }
            state.epoch += 1
            state.loading = [:]
            if let count, count != state.cache.count { return nil }
            return [
                .changed(
                    MenuTableChange(
                        splice: splice, count: state.cache.count, revision: revision, section: section,
                        reconfiguredRows: touched))
            ]
        }
    }

    /// Applies a menu reload that took the session to `revision`, the table's next one (nil,
    /// applying nothing, otherwise, or when its splices do not fit: the caller reloads). Each
    /// splice is a `.changed` event (no rows reconfigured: the reload names them); the rows kept
    /// but shown differently come last, as a `.changed` with an empty splice at the table's end
    /// (so every one of them is a row before it, as the event says).
    func apply(_ reload: MenuReloadEntry, revision: Int) -> [MenuTableEvent]? {
        state.withLock { state -> [MenuTableEvent]? in
            guard revision == state.revision + 1 else { return revision <= state.revision ? [] : nil }
            var cache = state.cache
            var events: [MenuTableEvent] = []
            do {
                for splice in reload.changes {
                    try cache.replace(splice)
                    events.append(
                        .changed(
                            MenuTableChange(
                                splice: splice, count: cache.count, revision: revision, section: section,
                                reconfiguredRows: [])))
                }
                try cache.drop(reload.reconfigured)
            } catch { return nil }
            if !reload.reconfigured.isEmpty {
                events.append(
                    .changed(
                        MenuTableChange(
                            splice: MenuSplice(at: cache.count, inserted: 0, removed: 0), count: cache.count,
                            revision: revision, section: section, reconfiguredRows: reload.reconfigured)))
            }
            state.cache = cache
            state.version = reload.version
            state.revision = revision
            state.epoch += 1
            state.loading = [:]
            return events
        }
    }

    /// Applies a selection that took the session to `revision`, the table's next one (nil,
    /// applying nothing, otherwise, or when its rows do not fit: the caller reloads): the rows it
    /// names that the table holds dropped to placeholders, as one `.changed` with an empty splice
    /// at the table's end.
    func apply(_ reconfigured: MenuReconfiguredRows, revision: Int) -> [MenuTableEvent]? {
        state.withLock { state -> [MenuTableEvent]? in
            guard revision == state.revision + 1 else { return revision <= state.revision ? [] : nil }
            let rows: [Int]
            do {
                rows = try state.cache.dropRows(
                    from: reconfigured.at, count: reconfigured.count, withIDs: reconfigured.ancestors)
            } catch { return nil }
            state.revision = revision
            return contentChanged(rows, in: &state)
        }
    }

    /// The event of `rows` whose content changed, none moving: one `.changed` with an empty splice
    /// at the table's end (none when `rows` is empty); the rows being loaded are forgotten.
    private func contentChanged(_ rows: [Int], in state: inout State) -> [MenuTableEvent] {
        guard !rows.isEmpty else { return [] }
        state.epoch += 1
        state.loading = [:]
        return [
            .changed(
                MenuTableChange(
                    splice: MenuSplice(at: state.cache.count, inserted: 0, removed: 0), count: state.cache.count,
                    revision: state.revision, section: section, reconfiguredRows: rows))
        ]
    }

    /// Applies a change of availability from the table's availability revision: the rows it names
    /// dropped to placeholders, as one `.changed` with an empty splice at the table's end (nil,
    /// applying nothing, when it names no rows or one past the table: the caller reloads). One
    /// from another revision than the table's is none of its business (an empty list).
    func apply(_ change: MenuAvailabilityChange) -> [MenuTableEvent]? {
        state.withLock { state -> [MenuTableEvent]? in
            guard change.since == state.availability else { return [] }
            guard let rows = change.reconfigured else { return nil }
            do { try state.cache.drop(rows) } catch { return nil }
            state.availability = change.revision
            return contentChanged(rows, in: &state)
        }
    }

    /// Drops every row and reads the count (`GET /count`) for the state to start again from.
    func resetLocked(reason: MenuTableReloadReason) async throws(MenuClientError) -> [MenuTableEvent] {
        let (answer, sessionID) = try await session.send("GET", "count")
        guard answer.status == 200 else {
            if answer.error.code == "unknown_session" { return try await recoverLocked(failedID: sessionID) }
            throw answer.error
        }
        return reset(to: try answer.decode(MenuCountAnswer.self), reason: reason)
    }

    /// Every row a placeholder, at the state `counted` names.
    func reset(to counted: MenuCountAnswer, reason: MenuTableReloadReason) -> [MenuTableEvent] {
        state.withLock { state in
            state.cache = RowCache(count: counted.count)
            state.version = counted.version
            state.revision = counted.revision
            state.leafCount = counted.leafCount
            state.availability = counted.availabilityRevision ?? 0
            state.epoch += 1
            state.loading = [:]
        }
        return [.reloaded(version: counted.version, count: counted.count, reason: reason)]
    }

    /// The server has no session `failedID` any more: a new one from the last layout seen, and the
    /// table read again (its rows are the same when the layout was restored on the same menu, but
    /// the new session's revisions start again).
    func recoverLocked(failedID: String) async throws(MenuClientError) -> [MenuTableEvent] {
        var events: [MenuTableEvent] = []
        if let recreation = try await session.recreate(replacing: failedID) {
            events.append(.sessionRecreated(recreation))
        }
        let counted = try await Self.readCount(session)
        return events + reset(to: counted, reason: .sessionRecreated)
    }

    /// The feed's splices say which rows moved, not how many of them are leaves: after applying
    /// some, the leaf count is read again (`GET /count`; best effort: a failure keeps the old one,
    /// and so does an answer of another revision, which the next catch-up settles).
    func refreshLeafCount() async {
        guard let counted = try? await Self.readCount(session) else { return }
        state.withLock { state in
            if counted.revision == state.revision, counted.version == state.version {
                state.leafCount = counted.leafCount
            }
        }
    }

    /// Keeps the session's portable layout current after a change (best effort: a failure keeps
    /// the last one; the write it follows has succeeded).
    func refreshLayout() async {
        _ = try? await session.refreshLayout()
    }
}
