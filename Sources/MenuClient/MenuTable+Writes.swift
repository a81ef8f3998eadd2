import Foundation
import Synchronization

/// The writes. Each carries `If-Match` with the table's state; a 412 catches the table up from
/// the changes feed (or reloads on 410) and the write is retried in its idempotent form (`PUT`
/// of the state the caller meant, never a second toggle); so is a write whose answer was lost.
/// `unknown_session` recreates the session from its layout first.
extension MenuTable {
    /// Flips group `id` from the state the table shows (a `POST /groups/{id}/toggle`; a retry is the
    /// `PUT` of the state that flip meant). A group not in the cache is looked up first (`GET /nodes/{id}`).
    @discardableResult
    public func toggle(_ id: String) async throws(MenuClientError) -> MenuTableUpdate {
        let meant = try await expandedState(of: id).map { !$0 }
        let retry = meant.map { WriteRequest.setGroup(id, isExpanded: $0, recursive: false) }
        return try await write(
            WriteRequest("POST", "groups/\(MenuHTTP.segment(id))/toggle", changedGroup: id), retry: retry)
    }

    /// Expands or collapses group `id` (`PUT /groups/{id}/expansion`); `recursive` also every
    /// group under it (one splice that may remove and insert).
    @discardableResult
    public func setExpanded(_ id: String, _ isExpanded: Bool, recursive: Bool = false) async throws(MenuClientError)
        -> MenuTableUpdate
    {
        let request = WriteRequest.setGroup(id, isExpanded: isExpanded, recursive: recursive)
        return try await write(request, retry: request)
    }

    /// Expands every collapsed group enclosing node `id` (`POST /nodes/{id}/reveal`); the update's
    /// `index` is the node's row, to scroll to.
    @discardableResult
    public func reveal(_ id: String) async throws(MenuClientError) -> MenuTableUpdate {
        let request = WriteRequest("POST", "nodes/\(MenuHTTP.segment(id))/reveal", changedGroup: nil)
        return try await write(request, retry: request)
    }

    /// Sets every group to `mode` (`PUT /expansion`): the whole table as one splice.
    @discardableResult
    public func setAll(_ mode: MenuExpansionMode) async throws(MenuClientError) -> MenuTableUpdate {
        let body = Data(#"{"all":"\#(mode.rawValue)"}"#.utf8)
        let request = WriteRequest("PUT", "expansion", body: body, changedGroup: nil, kind: .wholeTable)
        return try await write(request, retry: request)
    }

    /// Whether group `id` is expanded in the table's state: from the cache (a scan of the slots,
    /// O(count)), else `GET /nodes/{id}`; nil when it is hidden (a collapsed group encloses it) or names a row.
    /// Selects (`true`) or clears the leaf `id`, or every leaf under the group `id` at any depth
    /// (`PUT /nodes/{id}/selection`): the rows that show it are dropped to placeholders and named
    /// in a `.changed` event (no row moves). Idempotent, so it is sent again after a conflict.
    /// `409 selection_above_maximum` and `node_unavailable` are thrown as the server's errors.
    public func setSelected(_ id: String, _ selected: Bool) async throws(MenuClientError) -> MenuTableUpdate {
        let request = WriteRequest(
            "PUT", "nodes/\(MenuHTTP.segment(id))/selection", body: Data(#"{"selected":\#(selected)}"#.utf8),
            changedGroup: nil, kind: .selection)
        return try await write(request, retry: request)
    }

    /// Selects every available leaf (`true`) or clears the selection (`PUT /selection`).
    public func setAllSelected(_ selected: Bool) async throws(MenuClientError) -> MenuTableUpdate {
        let request = WriteRequest(
            "PUT", "selection", body: Data(#"{"all":\#(selected)}"#.utf8), changedGroup: nil, kind: .selection)
        return try await write(request, retry: request)
    }

    /// The session's selection (`GET /selection`): compact, a page of the selected ids in menu
    /// order from `offset`, and the rules it breaks.
    public func selection(offset: Int = 0, limit: Int = 50) async throws(MenuClientError) -> MenuSelectionAnswer {
        let (answer, sessionID) = try await session.send(
            "GET", "selection", query: [("offset", String(offset)), ("limit", String(limit))])
        guard answer.status == 200 else {
            if answer.error.code == "unknown_session" {
                await writes.lock()
                let events = try? await recoverLocked(failedID: sessionID)
                writes.unlock()
                for event in events ?? [] { eventSink.yield(event) }
            }
            throw answer.error
        }
        return try answer.decode(MenuSelectionAnswer.self)
    }

    private func expandedState(of id: String) async throws(MenuClientError) -> Bool? {
        let cached = state.withLock { state in
            state.cache.slots.lazy.compactMap { $0?.row }.first { $0.id == id }?.isExpanded
        }
        if let cached { return cached }
        let (answer, _) = try await session.send("GET", "nodes/\(MenuHTTP.segment(id))")
        guard answer.status == 200 else {
            if answer.status >= 500 { throw answer.error }  // not an answer about the node (503 after its retries)
            return nil
        }
        return try answer.decode(MenuNodeAnswer.self).row?.isExpanded
    }

    /// One write as sent: method, path, JSON body, and how to read its answer.
    struct WriteRequest: Sendable {
        var method: String
        var path: String
        var body: Data?
        /// The group whose row the answer's `id` and `isExpanded` describe (nil: a reveal, or the whole table).
        var changedGroup: String?
        var kind: Kind

        /// How the answer reads: one group's change, the whole table's, or a selection's.
        enum Kind: Sendable {
            case group
            case wholeTable
            case selection
        }

        var isWholeTable: Bool { kind == .wholeTable }

        init(_ method: String, _ path: String, body: Data? = nil, changedGroup: String?, kind: Kind = .group) {
            self.method = method
            self.path = path
            self.body = body
            self.changedGroup = changedGroup
            self.kind = kind
        }

        static func setGroup(_ id: String, isExpanded: Bool, recursive: Bool) -> WriteRequest {
            let body =
                recursive ? #"{"isExpanded":\#(isExpanded),"recursive":true}"# : #"{"isExpanded":\#(isExpanded)}"#
            return WriteRequest(
                "PUT", "groups/\(MenuHTTP.segment(id))/expansion", body: Data(body.utf8), changedGroup: id)
        }
    }

    /// Sends `first`, then (after catching up) `retry` until one is applied: at most
    /// ``maxWriteAttempts`` sends. With no `retry`, a write that must be repeated throws instead.
    /// Events the call found but cannot return (it throws) go to ``events``.
    private func write(_ first: WriteRequest, retry: WriteRequest?) async throws(MenuClientError) -> MenuTableUpdate {
        await writes.lock()
        defer { writes.unlock() }
        var events: [MenuTableEvent] = []
        var request = first
        func giveUp(_ error: MenuClientError) -> MenuClientError {
            for event in events { eventSink.yield(event) }
            return error
        }
        for attempt in 1 ... Self.maxWriteAttempts {
            let (version, revision) = state.withLock { ($0.version, $0.revision) }
            let tag = MenuHTTP.entityTag(version: version, locale: await session.contentLanguage, revision: revision)
            let answer: MenuHTTPAnswer
            let sessionID: String
            do {
                (answer, sessionID) = try await session.send(
                    request.method, request.path, headers: [("If-Match", tag)], json: request.body)
            } catch {
                // Applied or not, the feed says; then only the idempotent form may go again.
                guard case .transport = error, let retry, attempt < Self.maxWriteAttempts else { throw giveUp(error) }
                do { events += try await catchUpLocked() } catch { throw giveUp(error) }
                request = retry
                continue
            }
            do throws(MenuClientError) {
                switch (answer.status, answer.status == 200 ? nil : answer.error.code) {
                case (200, _):
                    let (applied, index) = try await applyAnswer(answer, of: request)
                    events += applied
                    if events.contains(where: { if case .changed = $0 { true } else { false } }) {
                        await refreshLayout()
                    }
                    return MenuTableUpdate(events: events, index: index)
                case (412, _):
                    events += try await catchUpLocked()
                case (_, "unknown_session"):
                    events += try await recoverLocked(failedID: sessionID)
                default:
                    throw answer.error
                }
            } catch {
                throw giveUp(error)
            }
            guard let retry else {
                throw giveUp(
                    .conflict(
                        attempts: attempt,
                        detail: "\(first.method) /\(first.path) found the session moved on (\(answer.error)); "
                            + "what the toggle meant is unknown (the group is hidden), so nothing was applied; the table is caught up"
                    ))
            }
            request = retry
        }
        throw giveUp(
            .conflict(
                attempts: Self.maxWriteAttempts,
                detail: "\(first.method) /\(first.path) kept finding the session moved on (other clients writing)"))
    }

    /// Applies a write's 200 answer: a new menu drops every row; the table's next revision is
    /// applied as a splice; the same revision (the write changed nothing) applies nothing.
    private func applyAnswer(_ answer: MenuHTTPAnswer, of request: WriteRequest)
        async throws(MenuClientError) -> (events: [MenuTableEvent], index: Int?)
    {
        if request.kind == .selection {
            let selection = try answer.decode(MenuSelectionChangeAnswer.self)
            let current = state.withLock { $0.version }
            if selection.version != current {
                let counted = MenuCountAnswer(
                    version: selection.version, revision: selection.revision, count: selection.count,
                    leafCount: selection.leafCount)
                return (reset(to: counted, reason: .menuChanged(from: current, to: selection.version)), nil)
            }
            if let applied = apply(selection.reconfigured, revision: selection.revision) { return (applied, nil) }
            return (try await catchUpLocked(), nil)
        }
        let (version, splice, newRevision, count, leafCount, index, changedGroup):
            (String, MenuSplice?, Int, Int, Int, Int?, RowCache.ChangedGroup)
        if request.isWholeTable {
            let all = try answer.decode(MenuExpandAllAnswer.self)
            (version, splice, newRevision, count, leafCount, index, changedGroup) = (
                all.version, all.change, all.revision, all.count, all.leafCount, nil, .unknown
            )
        } else {
            let change = try answer.decode(MenuChangeAnswer.self)
            // A toggle or a set names the group before the splice; a reveal expands the topmost
            // collapsed group enclosing the node, the row just before it.
            var group = RowCache.ChangedGroup.unknown
            if request.changedGroup == nil {
                group = .revealed
            } else if request.changedGroup == change.id, let at = change.change?.at, change.index == at - 1 {
                group = .group(id: change.id, isExpanded: change.isExpanded)
            }
            (version, splice, newRevision, count, leafCount, index, changedGroup) =
                (change.version, change.change, change.revision, change.count, change.leafCount, change.index, group)
        }
        let current = state.withLock { $0.version }
        if version != current {
            let counted = MenuCountAnswer(version: version, revision: newRevision, count: count, leafCount: leafCount)
            return (reset(to: counted, reason: .menuChanged(from: current, to: version)), index)
        }
        if let applied = apply(
            splice, revision: newRevision, changedGroup: changedGroup, count: count, leafCount: leafCount)
        {
            return (applied, index)
        }
        // The answer does not follow the table's revision: catch up from where the table is.
        return (try await catchUpLocked(), index)
    }
}
