import HTTPCore
import MenuAvailability
import MenuModel
import MenuSessions

/// Selection (issue 28 §1): `PUT /nodes/{id}/selection` and `PUT /selection` write a session's
/// selection as any write does (a revision, `If-Match`, the changes feed); `GET /selection` reads
/// it back, compact and as a page of the selected ids, with the rules it breaks.
///
/// What can be chosen follows the availability served when the write arrives: an unavailable
/// leaf (sold out, paused, closed) is refused with 409, and selecting a group leaves its
/// unavailable leaves out. Clearing is always allowed.
extension MenuAPI {
    /// The command of `PUT /nodes/{id}/selection` (`{"selected": true|false}`).
    func selectionCommand(forNode id: String, _ request: HTTPRequest) throws(APIError) -> SessionCommand {
        let selected = try Self.parseSelectionBody(request.body, all: false)
        guard selected else { return .select(nodeID: id, selected: false) }
        let menu = current
        let resolved = menu.availability.resolved
        // An unknown id is refused by the store, as any write's is.
        guard let node = menu.generation.menu.node(withID: id) else { return .select(nodeID: id, selected: true) }
        if let shown = resolved.availability(of: node) {
            throw .unavailableNode(id: id, state: shown.state.rawValue)
        }
        let excluded = resolved.unavailableRoots(under: node).map { menu.generation.menu.id(of: $0) }
        return .select(nodeID: id, selected: true, excludedIDs: excluded)
    }

    /// The command of `PUT /selection` (`{"all": true|false}`).
    func selectAllCommand(_ request: HTTPRequest) throws(APIError) -> SessionCommand {
        let selected = try Self.parseSelectionBody(request.body, all: true)
        guard selected else { return .selectAll(false) }
        let menu = current
        let excluded = menu.availability.resolved.unavailableRoots(under: 0).map { menu.generation.menu.id(of: $0) }
        return .selectAll(true, excludedIDs: excluded)
    }

    /// Writes a selection write's own fields: `"id"` (absent for the whole menu), `"selected"`,
    /// `"selectedCount"` (of the node's subtree, or the menu), and `"reconfigured"`.
    func writeSelectionChange(_ change: SelectionChange, in menu: Menu, to writer: inout JSONWriter) {
        if let id = change.id {
            writer.raw(",\"id\":")
            writer.string(id)
        }
        writer.raw(",\"selected\":")
        writer.bool(change.selected)
        writer.raw(",\"selectedCount\":")
        writer.integer(change.selectedCount)
        writer.raw(",\"reconfigured\":")
        let ancestors = ReconfiguredRows(at: change.rows.at, count: change.rows.count, node: change.node)
            .ancestorIDs(in: menu)
        Self.writeReconfigured(change.rows, ancestors: ancestors, to: &writer)
    }

    /// `{"at","count","ancestors":[ids]}`: the rows from `at` whose content changed, and the ids of
    /// the node's ancestors (outermost first), whose rows' counts changed wherever they are. What a
    /// selection's answer and its changes feed entry both say.
    static func writeReconfigured(_ rows: RowRange, ancestors: [String], to writer: inout JSONWriter) {
        writer.raw("{\"at\":")
        writer.integer(rows.at)
        writer.raw(",\"count\":")
        writer.integer(rows.count)
        writer.raw(",\"ancestors\":")
        writeIDs(ancestors, to: &writer)
        writer.raw("}")
    }

    /// `GET /selection?offset=&limit=`: `{"version","revision","selection":{"all","toggled"},
    /// "selectedCount","selectableCount","offset","limit","selected":[ids],"violations":[…]}`. The
    /// page is of the selected leaves in menu order; `violations` lists each group below its
    /// `minSelect` or above its `maxSelect`, and each unavailable node with selected leaves. A read
    /// like `/count`: its tag is the session's, `If-None-Match` answers 304. O(k + r log k + u ·
    /// (depth + log k) + limit) for k toggles, r ruled groups and u unavailable nodes.
    func selection(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let offset = try Self.integerParameter("offset", in: request, default: 0, range: 0 ... Int.max)
        let limit = try Self.integerParameter(
            "limit", in: request, default: min(Self.defaultLimit, maxLimit), range: 1 ... maxLimit)
        let context = try readContext(of: request)
        if let unchanged = try notModified(request, context) { return unchanged }
        let menu = context.menu.generation.menu
        let selection = context.session.state.selection
        let resolved = context.menu.availability.resolved
        let unavailable = resolved.unavailableRoots(under: 0)
        let unavailableLeaves = unavailable.reduce(0) { $0 + menu.leafCount(of: $1) }
        let page = selection.selectedLeaves(in: menu, offset: offset, limit: limit)
        var writer = JSONWriter(capacity: 256 + (page.count + selection.toggleCount) * 40)
        writeOpening(revision: context.session.revision, of: context.menu, to: &writer)
        writer.raw(",\"selection\":{\"all\":")
        writer.bool(selection.allByDefault)
        writer.raw(",\"toggled\":")
        Self.writeIDs(selection.portable.toggled, to: &writer)
        writer.raw("},\"selectedCount\":")
        writer.integer(selection.selectedCount(of: menu))
        writer.raw(",\"selectableCount\":")
        writer.integer(menu.leafCount(of: 0) - unavailableLeaves)
        writePlace(offset: offset, limit: limit, to: &writer)
        writer.raw(",\"selected\":")
        Self.writeIDs(page.map(menu.id(of:)), to: &writer)
        writer.raw(",\"violations\":[")
        var first = true
        for group in menu.ruledGroups {
            guard let rule = menu.selectionRule(of: group) else { continue }
            let count = selection.selectedCount(in: group, of: menu)
            for (key, bound, broken) in [
                ("minSelect", rule.min, { count < $0 }), ("maxSelect", rule.max, { count > $0 })
            ]
            where bound.map(broken) == true {
                if !first { writer.raw(",") }
                first = false
                writer.raw("{\"group\":")
                writer.string(menu.id(of: group))
                writer.raw(",")
                writer.string(key)
                writer.raw(":")
                writer.integer(bound!)
                writer.raw(",\"selected\":")
                writer.integer(count)
                writer.raw("}")
            }
        }
        for node in unavailable {
            let count = selection.selectedCount(in: node, of: menu)
            guard count > 0, let shown = resolved.availability(of: node) else { continue }
            if !first { writer.raw(",") }
            first = false
            writer.raw("{\"id\":")
            writer.string(menu.id(of: node))
            writer.raw(",\"unavailable\":")
            writer.string(shown.state.rawValue)
            writer.raw(",\"selected\":")
            writer.integer(count)
            writer.raw("}")
        }
        writer.raw("]}")
        return read(writer.finish(), context)
    }
}
