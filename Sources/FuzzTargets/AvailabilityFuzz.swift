// The `availability` fuzz target: the input as a `PUT /admin/availability` body
// (``AvailabilityBatchParser``). A batch read is written back as JSON and reads back to the same
// changes; every id has the form of a config id and every reason is within its limit and free of
// control characters; applied to an overlay on a small menu it is taken whole or refused whole,
// and the overlay resolves on the menu; the nodes it hides (`whenUnavailable: hide` on some) are
// outermost, unavailable and hiding, and the listing without them lacks exactly their subtrees.
// A body refused says why.

import Foundation
import MenuAvailability
import MenuModel
import MenuService

extension FuzzTarget {
    /// A menu with groups, rows and a nested group, some hiding while unavailable, built once per
    /// process.
    static let availabilityMenu = try! Menu(
        jsonData: Data(
            #"{"items":[{"id":"g","title":"G","items":[{"id":"a","title":"A","whenUnavailable":"hide"},{"id":"h","title":"H","whenUnavailable":"hide","items":[{"id":"b","title":"B","whenUnavailable":"show"},{"id":"d","title":"D"}]}]},{"id":"c","title":"C"}]}"#
                .utf8))

    static func checkAvailability(_ bytes: [UInt8]) -> String? {
        let changes: [AvailabilityOverlay.Change]
        do {
            changes = try AvailabilityBatchParser.parse(bytes)
        } catch {
            return error.message.isEmpty ? "refused without a message" : nil
        }
        for change in changes {
            guard Menu.isWellFormedID(change.id) else { return "kept the id \(change.id)" }
            if let reason = change.availability.reason {
                guard reason.utf8.count <= Availability.reasonLimit,
                    !reason.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F ... 0x9F).contains($0.value) })
                else { return "kept the reason \(reason.debugDescription)" }
            }
        }
        let written: [[String: Any]] = changes.map { change in
            var object: [String: Any] = ["id": change.id, "state": change.availability.state.rawValue]
            if let until = change.availability.until { object["until"] = until.rfc3339 }
            if let reason = change.availability.reason { object["reason"] = reason }
            return object
        }
        guard let data = try? JSONSerialization.data(withJSONObject: ["changes": written]),
            let again = try? AvailabilityBatchParser.parse(Array(data))
        else { return "the batch written back does not read back" }
        guard again == changes else { return "the batch read back as \(again), not \(changes)" }
        let menu = availabilityMenu
        let now = Timestamp(milliseconds: 0)
        do {
            let (overlay, changed) = try AvailabilityOverlay().applying(changes, on: menu, now: now)
            guard changed.count <= changes.count, overlay.revision == (changed.isEmpty ? 0 : 1) else {
                return "\(changed.count) changed of \(changes.count), revision \(overlay.revision)"
            }
            let resolved = ResolvedAvailability(overlay, on: menu)
            for node in menu.nodes where !menu.isGroup(node) {
                let own = overlay.entries[menu.id(of: node)]
                if let own, resolved.availability(of: node) != own { return "\(menu.id(of: node)) shows another entry" }
            }
            let hidden = resolved.hiddenRoots()
            for (index, root) in hidden.enumerated() {
                guard menu.hidesWhenUnavailable(root), resolved.availability(of: root) != nil else {
                    return "\(menu.id(of: root)) is hidden but does not hide or is available"
                }
                if index > 0, menu.subtreeEnd(hidden[index - 1]) > root { return "hidden nodes nest or are unsorted" }
            }
            let listing = menu.hiding(hidden)
            let left = menu.nodeCount - hidden.reduce(0) { $0 + menu.subtreeEnd($1) - $1 }
            guard listing.nodeCount == left else { return "the listing has \(listing.nodeCount) nodes, not \(left)" }
        } catch {
            return error.description.isEmpty ? "a batch refused without a reason" : nil
        }
        return nil
    }
}
