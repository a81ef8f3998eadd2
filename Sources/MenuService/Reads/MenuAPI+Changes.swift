import HTTPCore
import MenuModel
import MenuSessions

/// `GET /changes?since=R`: the splices that took the session from revision `R` to now, so a client
/// whose write got 412, or a second device, updates its cached rows instead of reloading them.
extension MenuAPI {
    /// `{"version":…,"revision":…,"changes":[{"revision":r,"change":{"at","inserted","removed"}|null},…]}`,
    /// oldest first; `410 gone` when the history no longer reaches `since`; `since` past the
    /// revision is `400 invalid_parameter`. Without a session: the default view, revision 0, no
    /// changes. The `version` is the menu the positions belong to: a client holding rows of
    /// another version reloads them (a reload forgets the splices, so a `since` before it is 410).
    func changes(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let since = try Self.integerParameter("since", in: request, default: -1, range: 0 ... Int.max)
        guard since >= 0 else {
            throw .invalidParameter("since is required: the revision the client holds (GET /rows answers it)")
        }
        let (menu, changes): (ServedMenu, SessionChanges)
        if let id = try sessionID(in: request) {
            (menu, changes) = try self.changes(of: id, since: since, for: request)
        } else {
            (menu, changes) = (current, SessionChanges(revision: 0, entries: since == 0 ? [] : nil))
        }
        guard since <= changes.revision else {
            throw .invalidParameter("since \(since) is past the session's revision \(changes.revision)")
        }
        guard let entries = changes.entries else { throw .gone(since: since, revision: changes.revision) }
        let locale = try negotiatedLocale(for: request, on: menu)
        var writer = JSONWriter(capacity: 64 + entries.count * 64)
        writer.raw("{\"version\":")
        writer.raw(menu.versionJSON)
        writer.raw(",\"revision\":")
        writer.integer(changes.revision)
        writer.raw(",\"changes\":[")
        for (index, entry) in entries.enumerated() {
            writer.raw(index == 0 ? "{\"revision\":" : ",{\"revision\":")
            writer.integer(entry.revision)
            writer.raw(",\"change\":")
            Self.write(entry.change, to: &writer)
            writer.raw("}")
        }
        writer.raw("]}")
        return json(200, writer.finish(), extraHeaders: menu.languageHeaders(locale))
    }

    /// `{"at":…,"inserted":…,"removed":…}` or `null`.
    static func write(_ change: RowChange?, to writer: inout JSONWriter) {
        guard let change else {
            writer.raw("null")
            return
        }
        writer.raw("{\"at\":")
        writer.integer(change.at)
        writer.raw(",\"inserted\":")
        writer.integer(change.inserted)
        writer.raw(",\"removed\":")
        writer.integer(change.removed)
        writer.raw("}")
    }
}
