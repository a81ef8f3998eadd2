import Foundation
import Synchronization

/// Keeping the cache at the session's state: revalidation (`If-None-Match`), the changes feed,
/// reloads, and a new session on `unknown_session`. Every function here named `…Locked` runs
/// holding ``MenuTable/writes``.
extension MenuTable {
    /// Brings the table to the session's current state: `GET /count` with `If-None-Match` (304:
    /// nothing to do), else the splices since the table's revision from `GET /changes` (or every
    /// row dropped when the menu changed or the feed no longer reaches that far). Returns what it did.
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
        let (version, revision) = state.withLock { ($0.version, $0.revision) }
        let tag = MenuHTTP.entityTag(version: version, locale: await session.contentLanguage, revision: revision)
        let (answer, sessionID) = try await session.send("GET", "count", headers: [("If-None-Match", tag)])
        switch answer.status {
        case 304: return []
        case 200:
            let counted = try answer.decode(MenuCountAnswer.self)
            if counted.version != version {
                return reset(to: counted, reason: .menuChanged(from: version, to: counted.version))
            }
            return counted.revision == revision ? [] : try await catchUpLocked()
        default:
            if answer.error.code == "unknown_session" { return try await recoverLocked(failedID: sessionID) }
            throw answer.error
        }
    }

    /// Applies the splices after the table's revision from `GET /changes`, in order.
    func catchUpLocked() async throws(MenuClientError) -> [MenuTableEvent] {
        let revision = state.withLock { $0.revision }
        let (answer, sessionID) = try await session.send("GET", "changes", query: [("since", String(revision))])
        return try await applyFeedLocked(answer, sessionID: sessionID)
    }

    /// Applies a `GET /changes` answer to the table as it is now: entries it has already (a write
    /// here landed meanwhile) are skipped, the rest applied in order; the menu changed or the
    /// history gone reload it; `unknown_session` makes a new session.
    func applyFeedLocked(_ answer: MenuHTTPAnswer, sessionID: String) async throws(MenuClientError)
        -> [MenuTableEvent]
    {
        let version = state.withLock { $0.version }
        switch answer.status {
        case 200:
            let feed = try answer.decode(MenuChangesAnswer.self)
            if feed.version != version {
                return try await resetLocked(reason: .menuChanged(from: version, to: feed.version))
            }
            var events: [MenuTableEvent] = []
            for entry in feed.changes {
                guard let applied = apply(entry.change, revision: entry.revision, changedGroup: .unknown) else {
                    return events + (try await resetLocked(reason: .requested))
                }
                events += applied
            }
            if !events.isEmpty {
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
