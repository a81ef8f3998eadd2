import MenuAvailability
import MenuModel
import Synchronization

/// The availability overlay as one menu serves it: the overlay, resolved on the menu, the rows'
/// marks, and the entity tag prefixes of reads, which name the overlay's revision.
///
/// A read's tag is `<version>-[<locale>-]a<overlay revision>-<session revision>` once the overlay
/// has changed (revision 0, never changed, adds nothing: tags stay as they were), so a page cached
/// before a change of availability is not confirmed with `304` after it. A write's `If-Match`
/// compares the version and the session revision only (``SessionEntityTag/revision(in:prefix:)``
/// skips the segment): availability is not the session's state.
///
/// Invariant: built from one overlay on one menu, never changed; ``readTagPrefixes`` has one
/// prefix per locale of the menu. Cost: O(k · depth + n/64) to build for k unavailable nodes
/// (``AvailabilityMarks``), nothing per request.
package final class ServedAvailability: Sendable {
    package let overlay: AvailabilityOverlay
    package let resolved: ResolvedAvailability
    /// nil when nothing is unavailable: rows are written as without availability.
    let marks: AvailabilityMarks?
    /// The first instant after this was built at which what it shows changes by itself: an
    /// entry's `until`, or an opening or closing of the menu's hours (nil: none is known). Rows and
    /// counts carry it as `nextChangeAt`; the service's timer advances the overlay then.
    package let nextChangeAt: Timestamp?
    /// `,"nextChangeAt":"<RFC 3339>"`, or nothing without one: formatted once, not per answer
    /// (formatting it each time cost a page 0.3-0.6 µs while anything had an `until`).
    let nextChangeAtJSON: [UInt8]
    /// Unavailable leaves under each group that has any (none while everything is available):
    /// what a group's `selectableCount` leaves out. One entry per ancestor of an unavailable node.
    let unavailableLeaves: [Menu.Node: Int]
    /// The ids a reload dropped from the overlay (the new menu lacks them) on the way to this one.
    package let droppedAtReload: [String]
    /// What each read's tag starts with, per locale (``ServedMenu/entityTagPrefixes`` plus the
    /// overlay's segment).
    let readTagPrefixes: [[UInt8]]
    /// Overlays of ``history`` resolved on this menu and their changed ids, by revision (at most 4).
    private let resolvedHistory = Mutex<[Int: (resolved: ResolvedAvailability, changedIDs: [String])]>([:])

    /// The overlays served before this one, oldest first (at most ``historyLimit``, and at most
    /// ``historyEntryLimit`` entries in all): what a changes feed compares a client's rows with.
    let history: [AvailabilityOverlay]
    static let historyLimit = 64
    static let historyEntryLimit = 200_000

    init(
        _ overlay: AvailabilityOverlay, on menu: Menu, hours: MenuHours?, tagPrefixes: [[UInt8]],
        droppedAtReload: [String] = [],
        history: [AvailabilityOverlay] = [], now: Timestamp
    ) {
        var history = Array(history.suffix(Self.historyLimit))
        var entries = history.reduce(0) { $0 + $1.entries.count }
        while entries > Self.historyEntryLimit, let oldest = history.first {
            entries -= oldest.entries.count
            history.removeFirst()
        }
        self.history = history
        self.overlay = overlay
        resolved = ResolvedAvailability(overlay, on: menu)
        let hoursChange = hours?.state(at: now).nextChange
        nextChangeAt = [overlay.nextExpiry, hoursChange].compactMap { $0 }.min()
        nextChangeAtJSON = nextChangeAt.map { Array(",\"nextChangeAt\":\"\($0.rfc3339)\"".utf8) } ?? []
        marks = AvailabilityMarks(resolved)
        var unavailableLeaves: [Menu.Node: Int] = [:]
        for root in resolved.unavailableRoots(under: 0) {
            let leaves = menu.leafCount(of: root)
            guard leaves > 0 else { continue }
            var group: Menu.Node? = menu.isGroup(root) ? root : menu.parent(of: root)
            while let current = group {
                unavailableLeaves[current, default: 0] += leaves
                group = menu.parent(of: current)
            }
        }
        self.unavailableLeaves = unavailableLeaves
        self.droppedAtReload = droppedAtReload
        readTagPrefixes =
            overlay.revision == 0 ? tagPrefixes : tagPrefixes.map { $0 + Self.tagSegment(overlay.revision) }
    }

    /// The overlay this one or ``history`` has at `revision`; nil when none has (too old, or
    /// never served here).
    func overlay(atRevision revision: Int) -> AvailabilityOverlay? {
        if revision == overlay.revision { return overlay }
        return history.last { $0.revision == revision }
    }

    /// The overlay at `revision` (``overlay(atRevision:)``) resolved on `menu`, and the ids whose
    /// entries differ from this one's: built once for every feed and stream that asks (a change of
    /// availability makes each open stream ask for the one before it); nil when no overlay kept
    /// has that revision.
    func changes(since revision: Int, on menu: Menu) -> (resolved: ResolvedAvailability, changedIDs: [String])? {
        if let cached = resolvedHistory.withLock({ $0[revision] }) { return cached }
        guard let old = overlay(atRevision: revision) else { return nil }
        let built = (ResolvedAvailability(old, on: menu), AvailabilityRows.changedIDs(from: old, to: overlay))
        resolvedHistory.withLock { cache in
            if cache.count >= 4 { cache.removeAll() }
            cache[revision] = built
        }
        return built
    }

    /// The history the next overlay served after this one keeps.
    var historyAfter: [AvailabilityOverlay] { history + [overlay] }

    /// `a<revision>-`.
    static func tagSegment(_ revision: Int) -> [UInt8] { Array("a\(revision)-".utf8) }
}
