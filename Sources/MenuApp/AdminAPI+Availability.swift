import HTTPCore
import MenuAvailability
import MenuService
import Synchronization

extension AdminAPI {
    /// `GET /admin/availability`: `{"revision", "unavailable": [{"id", "state", "until"?,
    /// "reason"?}], "hidden": [ids]}`, the entries in force now, by id, and the outermost nodes
    /// out of the rows now because they hide while unavailable. `PUT /admin/availability`: a batch
    /// (``AvailabilityBatchParser``) applied all or none, answering `{"revision", "changed": [ids]}`;
    /// `400` names what is wrong (`invalid_body` with its JSON path, `unknown_node` with the ids,
    /// `invalid_batch`), `503` `not_kept` when the data directory could not keep it. Each applied
    /// batch is logged with who sent it and what changed.
    func availability(_ request: HTTPRequest, _ service: MenuAPI, who: String) -> HTTPResponse {
        switch request.method {
        case "GET", "HEAD":
            outcomes.succeeded.add(1, ordering: .relaxed)
            let (revision, entries) = service.availabilityEntries()
            return Self.json(
                200,
                [
                    "revision": revision,
                    "unavailable": entries.map { id, availability in Self.object(id: id, availability) },
                    "hidden": service.current.hiddenIDs
                ])
        case "PUT":
            let changes: [AvailabilityOverlay.Change]
            do throws(AvailabilityBatchParser.Problem) {
                changes = try AvailabilityBatchParser.parse(request.body)
            } catch {
                outcomes.refused.add(1, ordering: .relaxed)
                return Self.error(400, "invalid_body", error.message)
            }
            do throws(AvailabilityUpdateError) {
                let update = try service.updateAvailability(changes)
                outcomes.succeeded.add(1, ordering: .relaxed)
                outcomes.availabilityChanges.add(update.changed.count, ordering: .relaxed)
                log("\(who): PUT /admin/availability: \(Self.summary(changes, update))")
                return Self.json(200, ["revision": update.revision, "changed": update.changed])
            } catch {
                outcomes.refused.add(1, ordering: .relaxed)
                log("\(who): PUT /admin/availability refused: \(error.description)")
                switch error {
                case .refused(.unknownIDs): return Self.error(400, "unknown_node", error.description)
                case .refused: return Self.error(400, "invalid_batch", error.description)
                case .notKept: return Self.error(503, "not_kept", error.description, headers: [("Retry-After", "1")])
                }
            }
        default:
            outcomes.notFound.add(1, ordering: .relaxed)
            return Self.error(
                405, "method_not_allowed", "\(request.method) is not allowed here: GET or PUT /admin/availability",
                headers: [("Allow", "GET, HEAD, PUT")])
        }
    }

    /// An entry as the listing shows it.
    private static func object(id: String, _ availability: Availability) -> [String: Any] {
        var object: [String: Any] = ["id": id, "state": availability.state.rawValue]
        if let until = availability.until { object["until"] = until.rfc3339 }
        if let reason = availability.reason { object["reason"] = reason }
        return object
    }

    /// `revision 4, 2 changed: fish sold_out until 2026-12-06T19:30:00Z, duck available` (the
    /// first 20 changes named).
    private static func summary(_ changes: [AvailabilityOverlay.Change], _ update: AvailabilityUpdate) -> String {
        let changed = Set(update.changed)
        let named = changes.filter { changed.contains($0.id) }
        let listed = named.prefix(20).map { change in
            change.id + " " + change.availability.state.rawValue
                + (change.availability.until.map { " until \($0.rfc3339)" } ?? "")
        }
        return "revision \(update.revision), \(update.changed.count) changed"
            + (listed.isEmpty ? "" : ": " + listed.joined(separator: ", "))
            + (named.count > listed.count ? " and \(named.count - listed.count) more" : "")
    }
}
