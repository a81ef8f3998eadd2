import HTTPCore
import MenuAvailability
import MenuModel
import MenuSessions

/// What a changes feed tells a client whose rows show availability revision `since` (its
/// `availabilitySince`): the overlay's revision now, and the rows of the session's table (after
/// the feed's entries) whose availability changed since, to fetch again; nil rows when the
/// overlays kept no longer reach `since` (then every row held is fetched again).
package struct AvailabilityFeedEntry: Sendable, Equatable {
    package var since: Int
    package var revision: Int
    package var reconfigured: [Int]?

    /// `{"since":…,"revision":…,"reconfigured":[…]|null}`.
    func write(to writer: inout JSONWriter) {
        writer.raw("{\"since\":")
        writer.integer(since)
        writer.raw(",\"revision\":")
        writer.integer(revision)
        writer.raw(",\"reconfigured\":")
        guard let reconfigured else { return writer.raw("null}") }
        writer.raw("[")
        for (position, row) in reconfigured.enumerated() {
            if position > 0 { writer.raw(",") }
            writer.integer(row)
        }
        writer.raw("]}")
    }

    /// What ``write(to:)`` writes, at most.
    var encodedBound: Int { 96 + (reconfigured?.count ?? 0) * 12 }
}

extension MenuAPI {
    /// The availability entry of a feed read on `menu` up to the session's revision `revision`
    /// (the feed's last), for a client at availability revision `since`: nil when it is current,
    /// or when the session moved on past `revision` meanwhile (the next look tells it). Reads the
    /// session's state (a store read) only when the overlay moved.
    func availabilityEntry(
        since: Int?, on menu: ServedMenu, session: SessionID?, revision: Int
    ) -> AvailabilityFeedEntry? {
        let served = menu.availability
        guard let since, since != served.overlay.revision else { return nil }
        guard let (resolvedOld, changedIDs) = served.changes(since: since, on: menu.generation.menu) else {
            return AvailabilityFeedEntry(since: since, revision: served.overlay.revision, reconfigured: nil)
        }
        var state = SessionState()
        if let session {
            guard let (read, snapshot) = try? snapshot(of: session, for: Self.availabilityLook),
                read.generation.epoch === menu.generation.epoch, snapshot.revision == revision
            else { return nil }
            state = snapshot.state
        }
        let rows = AvailabilityRows.reconfigured(
            from: resolvedOld, to: served.resolved,
            changedIDs: changedIDs,
            in: FlattenedView(menu: menu.generation.menu, state: state))
        return AvailabilityFeedEntry(since: since, revision: served.overlay.revision, reconfigured: rows)
    }

    /// The request an availability entry reads the session for: no header (no `If-None-Match`).
    private static let availabilityLook = HTTPRequest(method: "GET", path: "/changes")
}
