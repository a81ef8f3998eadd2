import HTTPCore
import MenuSessions

/// What several instances sharing one session store (`--store redis://…`) need of the service:
/// readiness for the load balancer, and read-your-writes across instances. A client's entity
/// tag names a revision it has seen (perhaps written through another instance), so a read or a
/// write carrying one must not be answered from an older copy of the session.
///
/// Cost: nothing on the usual path. A read passes the revision to the store instead of asking
/// without it (one call either way); a write or `/changes` asks again only when the store's first
/// answer is older than the client's tag, which a store holding the only copy never gives for a
/// tag it issued.
extension MenuAPI {
    /// `GET /readyz`: 200 `{"status":"ready"}` while the store can serve, else 503 `unavailable`
    /// with `Retry-After: 1` and the store's reason, so a load balancer takes the instance out of
    /// rotation while `/healthz` (liveness) stays 200. Costs the store's
    /// ``SessionStore/readinessProblem()``: nothing for a store in this process.
    func readiness() throws(APIError) -> HTTPResponse {
        if let problem = store.readinessProblem() { throw .unavailable(problem) }
        var writer = JSONWriter(capacity: 24)
        writer.raw(#"{"status":"ready"}"#)
        return json(200, writer.finish())
    }

    /// The session `id` for a read (`/rows`, `/count`, `/session`, `/nodes/{id}`): at the
    /// highest revision the request's `If-None-Match` names or later
    /// (``SessionStore/snapshot(of:in:atLeast:)``), so a client that wrote through another
    /// instance never reads a state older than its own write; without such a tag, as the store has it.
    /// The header is only read for a store that ``SessionStore/refreshesCopies`` (for the others
    /// the answer is the same, and a 304 would scan the header twice).
    func snapshot(of id: SessionID, for request: HTTPRequest) throws(APIError) -> (
        menu: ServedMenu, result: SessionSnapshot
    ) {
        let known = store.refreshesCopies ? KnownRevision.inNoneMatch(of: request) : nil
        return try onServedMenu { menu throws(SessionStoreError) in
            if let known { return try store.snapshot(of: id, in: menu.generation, atLeast: known) }
            return try store.snapshot(of: id, in: menu.generation)
        }
    }

    /// ``SessionStore/apply(_:to:in:if:)`` under the write's `If-Match`. When the store refuses it
    /// at a revision older than the highest the client's tags name, its copy is behind a write
    /// made through another instance: the session is fetched at that revision or later and the
    /// write tried once more, so that write is not refused as a conflict it is not.
    func apply(
        _ command: SessionCommand, to id: SessionID?, in menu: ServedMenu,
        if ifMatch: EntityTagCondition?
    ) throws(SessionStoreError) -> AppliedChange {
        let condition = ifMatch?.revisionCondition(prefixes: menu.entityTagPrefixes)
        do {
            return try store.apply(command, to: id, in: menu.generation, if: condition)
        } catch .revisionMismatch(let current) {
            guard let id, let known = ifMatch.flatMap(KnownRevision.highest(in:)), known > current,
                try store.snapshot(of: id, in: menu.generation, atLeast: known).revision != current
            else { throw .revisionMismatch(current: current) }
            return try store.apply(command, to: id, in: menu.generation, if: condition)
        }
    }

    /// ``SessionStore/changes(of:since:in:)`` of a client that holds revision `since` (and any its
    /// `If-None-Match` names): when the store's answer is older than that, its copy is behind, and
    /// the session is fetched at that revision or later before the changes are asked again.
    func changes(of id: SessionID, since: Int, for request: HTTPRequest) throws(APIError) -> (
        menu: ServedMenu, result: SessionChanges
    ) {
        let known = max(since, KnownRevision.inNoneMatch(of: request) ?? 0)
        return try onServedMenu { menu throws(SessionStoreError) in
            let changes = try store.changes(of: id, since: since, in: menu.generation)
            guard changes.revision < known,
                try store.snapshot(of: id, in: menu.generation, atLeast: known).revision > changes.revision
            else { return changes }
            return try store.changes(of: id, since: since, in: menu.generation)
        }
    }
}

/// The revision an entity tag of this server names, whatever its menu version or locale: the
/// decimal digits after the tag's last `-` (``SessionEntityTag``: `"<version>-<revision>"`, or
/// `"<version>-<locale>-<revision>"`). Revisions count per session across reloads and
/// instances, so a tag of another menu still says what the client has seen.
///
/// Invariant: a revision is canonical decimal (no leading zero), at most 18 digits; anything else
/// names none. Cost: one pass over the header bytes, no allocation.
package enum KnownRevision {
    /// The highest revision the tags of `request`'s `If-None-Match` name; nil without the header,
    /// for `*`, when no tag names one, or for a malformed header (which the read then refuses):
    /// the header as ``EntityTagCondition`` parses it, read in place.
    package static func inNoneMatch(of request: HTTPRequest) -> Int? {
        let headers = request.headers
        var scan = EntityTagCondition.Scan()
        var highest: Int?
        for position in headers.indices where headers.name(at: position, equals: "if-none-match") {
            let wellFormed: Bool = headers.withValue(at: position) { value in
                do throws(EntityTagCondition.Malformed) {
                    try scan.next(value ?? UnsafeRawBufferPointer(start: nil, count: 0)) { _, opaque in
                        if let revision = opaque.flatMap(revision(in:)) { highest = max(highest ?? revision, revision) }
                    }
                    return true
                } catch {
                    return false
                }
            }
            guard wellFormed else { return nil }
        }
        do { try scan.finish() } catch { return nil }  // no header, an empty one, or `*` in a list
        return highest
    }

    /// The highest revision `condition`'s tags (weak or strong) name; nil for `*` or when none does.
    package static func highest(in condition: EntityTagCondition) -> Int? {
        condition.tags.compactMap { revision(in: $0.opaque) }.max()
    }

    /// The revision after the last `-` of `opaque`; nil when there is no `-` or the rest is not
    /// canonical decimal.
    package static func revision<Bytes: BidirectionalCollection<UInt8>>(in opaque: Bytes) -> Int? {
        guard let dash = opaque.lastIndex(of: UInt8(ascii: "-")) else { return nil }
        return SessionEntityTag.canonicalRevision(opaque[opaque.index(after: dash)...])
    }
}
