import MenuModel
import MenuSessions

/// One entry of a session's changes feed, as `GET /changes` lists it and a stream's `change`
/// event carries it: a write's splice, or a menu reload's splices (issue 26 §2).
package enum FeedEntry: Sendable {
    /// A write that took the session to `revision`; nil when no row changed (a hidden group).
    case change(revision: Int, RowChange?)
    /// A menu reload that took the session to `revision`: the new menu's version (as JSON), and
    /// the splices and reconfigured rows from the old menu's rows to the new one's.
    case reload(revision: Int, versionJSON: String, ListingDiff)
    /// A write that changed rows' content but not their number (a selection): the rows from
    /// `rows.at` and the ids of the written node's ancestors, whose rows' counts changed.
    case reconfigured(revision: Int, rows: RowRange, ancestors: [String])

    package var revision: Int {
        switch self {
        case .change(let revision, _), .reload(let revision, _, _), .reconfigured(let revision, _, _): revision
        }
    }

    /// `{"revision":…,"change":…}`, `{"revision":…,"reload":{"version","changes","reconfigured"}}`
    /// or `{"revision":…,"reconfigured":{"at","count","ancestors"}}`.
    func write(to writer: inout JSONWriter) {
        writer.raw("{\"revision\":")
        writer.integer(revision)
        switch self {
        case .change(_, let change):
            writer.raw(",\"change\":")
            MenuAPI.write(change, to: &writer)
        case .reload(_, let versionJSON, let diff):
            writer.raw(",\"reload\":{\"version\":")
            writer.raw(Array(versionJSON.utf8))
            writer.raw(",\"changes\":[")
            for (index, change) in diff.changes.enumerated() {
                if index > 0 { writer.raw(",") }
                MenuAPI.write(change, to: &writer)
            }
            writer.raw("],\"reconfigured\":[")
            for (index, row) in diff.reconfigured.enumerated() {
                if index > 0 { writer.raw(",") }
                writer.integer(row)
            }
            writer.raw("]}")
        case .reconfigured(_, let rows, let ancestors):
            writer.raw(",\"reconfigured\":")
            MenuAPI.writeReconfigured(rows, ancestors: ancestors, to: &writer)
        }
        writer.raw("}")
    }

    /// The bytes ``write(to:)`` writes, at most (a bound, for the writer's capacity).
    var encodedBound: Int {
        switch self {
        case .change: 96
        case .reconfigured(_, _, let ancestors): 128 + ancestors.reduce(0) { $0 + $1.utf8.count * 6 + 3 }
        case .reload(_, let versionJSON, let diff):
            96 + versionJSON.utf8.count + diff.changes.count * 64 + diff.reconfigured.count * 12
        }
    }
}

/// A session's changes as the feed answers them: ``SessionChanges`` with each reload's splices
/// computed.
package struct FeedChanges: Sendable {
    package var revision: Int
    /// nil when the history no longer reaches the revision asked for.
    package var entries: [FeedEntry]?

    /// `changes` read on `generation`, whose version is `versionJSON`: each reload entry's splices
    /// computed (``ReloadMark/listingDiff(on:)``), outside any store lock. When one cannot be (a
    /// later reload freed its menu), the history is gone from there: nil entries.
    init(_ changes: SessionChanges, on generation: MenuGeneration, versionJSON: String) {
        revision = changes.revision
        onALaterMenu = changes.onALaterMenu
        guard let stored = changes.entries else { return }
        var entries: [FeedEntry] = []
        entries.reserveCapacity(stored.count)
        // A selection's node is a position in the menu its entry was written on: the menu before
        // the reload entry that follows it, if one does (kept while that entry can be answered).
        let lastReload = stored.lastIndex { $0.reload != nil }
        for (position, entry) in stored.enumerated() {
            if let rows = entry.reconfigured {
                var menu = generation.menu
                if let lastReload, position < lastReload {
                    guard let older = stored[lastReload].reload?.olderMenu(on: generation) else { return }
                    menu = older
                }
                entries.append(
                    .reconfigured(
                        revision: entry.revision, rows: RowRange(at: rows.at, count: rows.count),
                        ancestors: rows.ancestorIDs(in: menu)))
                continue
            }
            guard let mark = entry.reload else {
                entries.append(.change(revision: entry.revision, entry.change))
                continue
            }
            guard let diff = mark.listingDiff(on: generation) else { return }
            entries.append(.reload(revision: entry.revision, versionJSON: versionJSON, diff))
        }
        self.entries = entries
    }

    /// ``SessionChanges/onALaterMenu``: this instance has yet to serve the menu the session
    /// was carried over to (entries nil until then).
    package var onALaterMenu = false

    package init(revision: Int, entries: [FeedEntry]?) {
        self.revision = revision
        self.entries = entries
    }
}
