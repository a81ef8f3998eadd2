import MenuAvailability
import MenuModel

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
    /// The ids a reload dropped from the overlay (the new menu lacks them) on the way to this one.
    package let droppedAtReload: [String]
    /// What each read's tag starts with, per locale (``ServedMenu/entityTagPrefixes`` plus the
    /// overlay's segment).
    let readTagPrefixes: [[UInt8]]

    init(_ overlay: AvailabilityOverlay, on menu: Menu, tagPrefixes: [[UInt8]], droppedAtReload: [String] = []) {
        self.overlay = overlay
        resolved = ResolvedAvailability(overlay, on: menu)
        marks = AvailabilityMarks(resolved)
        self.droppedAtReload = droppedAtReload
        readTagPrefixes =
            overlay.revision == 0 ? tagPrefixes : tagPrefixes.map { $0 + Self.tagSegment(overlay.revision) }
    }

    /// `a<revision>-`.
    static func tagSegment(_ revision: Int) -> [UInt8] { Array("a\(revision)-".utf8) }
}
