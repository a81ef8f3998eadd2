import MenuAvailability

/// The parts several answers open with, written once.
extension MenuAPI {
    /// Writes `{"version":…,"revision":…,"count":…,"leafCount":…` and, when known, the
    /// availability's revision and `nextChangeAt` (``ServedAvailability/nextChangeAt``), the
    /// instant a client should read again (object left open).
    func writeCounts(count: Int, leafCount: Int, revision: Int, of menu: ServedMenu, to writer: inout JSONWriter) {
        writeOpening(revision: revision, of: menu, to: &writer)
        writer.raw(",\"count\":")
        writer.integer(count)
        writer.raw(",\"leafCount\":")
        writer.integer(leafCount)
        writeAvailabilityRevision(of: menu, to: &writer)
        writer.raw(menu.availability.nextChangeAtJSON)
    }

    /// Writes `,"availabilityRevision":…` once the availability overlay has changed (nothing
    /// before: revision 0): the `availabilitySince` of the feed for rows read with it.
    func writeAvailabilityRevision(of menu: ServedMenu, to writer: inout JSONWriter) {
        let revision = menu.availability.overlay.revision
        guard revision > 0 else { return }
        writer.raw(",\"availabilityRevision\":")
        writer.integer(revision)
    }

    /// Writes `,"offset":…,"limit":…`.
    func writePlace(offset: Int, limit: Int, to writer: inout JSONWriter) {
        writer.raw(",\"offset\":")
        writer.integer(offset)
        writer.raw(",\"limit\":")
        writer.integer(limit)
    }

    /// Writes `{"version":…,"revision":…` (object left open).
    func writeOpening(revision: Int, of menu: ServedMenu, to writer: inout JSONWriter) {
        writer.raw("{\"version\":")
        writer.raw(menu.versionJSON)
        writer.raw(",\"revision\":")
        writer.integer(revision)
    }
}
