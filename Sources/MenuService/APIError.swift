import MenuModel
import MenuSessions

/// Every error a client can get, rendered as `{"error":{"code","message"}}`.
package enum APIError: Error, Sendable, Equatable {
    case invalidParameter(String)
    case invalidBody(String)
    /// `q` of a search is empty, over ``SearchQuery/maxLength`` characters, given twice, or the search asks nothing.
    case invalidQuery(String)
    /// A `filter` of a search is not `ATTR:VALUE`, names an attribute the menu does not have, or there are too many.
    case invalidFilter(String)
    case invalidSession
    /// `GET`, `HEAD` or `DELETE /session` without `X-Session-Id`: the session to use is the request's subject.
    case missingSession
    /// A path under `/sessions/`: session ids are taken from `X-Session-Id` only (a URL is kept
    /// by logs, proxies and browser history), and the id in the path is never echoed.
    case sessionInPath
    case unknownSession
    case unknownGroup(id: String)
    case notAGroup(id: String)
    /// No node, group or row, has the id a node route or a page anchor names.
    case unknownNode(id: String)
    /// The node `id` (a group when `group`) is out of the listing now: it is unavailable and its
    /// `whenUnavailable` is `hide`. Answered as ``unknownGroup(id:)`` or ``unknownNode(id:)`` are,
    /// saying why.
    case hiddenNode(id: String, group: Bool)
    /// A selection would choose `selected` leaves under `groupID`, past its `maxSelect` (`max`).
    case selectionAboveMaximum(groupID: String, max: Int, selected: Int)
    /// The leaf `id` cannot be chosen now (sold out, paused or closed: `state`).
    case unavailableNode(id: String, state: String)
    /// The page anchor `id` is hidden: a group on `path` (its ancestors' ids from the top) is collapsed.
    case notVisible(id: String, path: [String])
    case notFound(path: String)
    case methodNotAllowed(method: String, allowed: [String])
    case payloadTooLarge(limit: Int)
    case badRequest(String)
    /// The request uses an HTTP feature the server does not support (a transfer coding).
    case notImplemented(String)
    case tooManySessions(limit: Int, retryAfterSeconds: Int)
    /// The session would hold more than `limit` changed groups.
    case tooManyChanges(limit: Int)
    /// The session's state would take more than `limit` bytes (`--session-memory` / 64).
    case sessionTooLarge(limit: Int)
    /// The sessions held fill `--session-memory` (`budget` bytes) and none is idle enough to evict.
    case sessionMemoryFull(budget: Int, retryAfterSeconds: Int)
    /// The client created `perMinute` sessions in the last minute (`--session-rate`).
    case rateLimited(perMinute: Int, retryAfterSeconds: Int)
    case unavailable(String)
    /// The server is stopping: a request that arrived after its grace period, or one still
    /// waiting for the session store when it ended.
    case stopping
    /// `--max-streams` long polls and streams are open (`limit`).
    case tooManyStreams(limit: Int)
    /// The client's address holds `limit` streams (`--per-ip-connections`).
    case tooManyStreamsFromAddress(limit: Int)
    /// Every search build slot is taken (``SearchBuildSlots``); `builds` is the limit.
    case searchBusy(builds: Int)
    /// `?at=` of an instant no recent request asked, while every build slot is taken.
    case instantBusy(builds: Int)
    /// An `If-Match` write found the session at `revision`, which none of the client's tags names.
    case preconditionFailed(revision: Int)
    /// `GET /changes?since=` names a revision the session's history no longer reaches (older than
    /// the last `--change-history` writes, before a menu reload, or before a restart).
    case gone(since: Int, revision: Int)

    package var status: Int {
        switch self {
        case .invalidParameter, .invalidBody, .invalidSession, .missingSession, .badRequest, .invalidQuery,
            .invalidFilter:
            400
        case .unknownSession, .unknownGroup, .unknownNode, .hiddenNode, .notFound, .sessionInPath: 404
        case .notAGroup, .tooManyChanges, .sessionTooLarge, .notVisible, .selectionAboveMaximum, .unavailableNode: 409
        case .methodNotAllowed: 405
        case .payloadTooLarge: 413
        case .tooManySessions, .sessionMemoryFull, .rateLimited, .searchBusy, .instantBusy, .tooManyStreamsFromAddress:
            429
        case .unavailable, .stopping, .tooManyStreams: 503
        case .notImplemented: 501
        case .preconditionFailed: 412
        case .gone: 410
        }
    }

    package var code: String {
        switch self {
        case .invalidParameter: "invalid_parameter"
        case .invalidBody: "invalid_body"
        case .invalidQuery: "invalid_query"
        case .invalidFilter: "invalid_filter"
        case .invalidSession: "invalid_session"
        case .missingSession: "missing_session"
        case .sessionInPath: "moved"
        case .unknownSession: "unknown_session"
        case .unknownGroup: "unknown_group"
        case .notAGroup: "not_a_group"
        case .unknownNode: "unknown_node"
        case .hiddenNode(_, let group): group ? "unknown_group" : "unknown_node"
        case .selectionAboveMaximum: "selection_above_maximum"
        case .unavailableNode: "node_unavailable"
        case .notVisible: "not_visible"
        case .notFound: "not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .payloadTooLarge: "payload_too_large"
        case .badRequest: "bad_request"
        case .tooManySessions: "too_many_sessions"
        case .tooManyChanges: "too_many_changes"
        case .sessionTooLarge: "session_too_large"
        case .sessionMemoryFull: "session_memory_full"
        case .rateLimited: "rate_limited"
        case .unavailable, .stopping: "unavailable"
        case .searchBusy, .instantBusy: "busy"
        case .tooManyStreams: "too_many_streams"
        case .tooManyStreamsFromAddress: "too_many_streams_from_address"
        case .notImplemented: "not_implemented"
        case .preconditionFailed: "precondition_failed"
        case .gone: "gone"
        }
    }

    package var message: String {
        switch self {
        case .invalidParameter(let detail), .invalidBody(let detail), .badRequest(let detail),
            .notImplemented(let detail),
            .invalidQuery(let detail), .invalidFilter(let detail):
            detail
        case .invalidSession:
            "X-Session-Id is not a session id issued by this server (22 characters of A-Z a-z 0-9 - _); omit it or POST /sessions for a new one"
        case .unknownSession: "no such session (never issued, expired or deleted); POST /sessions for a new one"
        case .unknownGroup(let id): "no group has id \"\(id)\"; GET /rows lists the ids"
        case .notAGroup(let id): "\"\(id)\" is a row, not a group; only groups expand and collapse"
        case .unknownNode(let id): "no group or row has id \"\(id)\"; GET /rows lists the ids"
        case .hiddenNode(let id, _):
            "\"\(id)\" is out of the rows now: it is unavailable and its whenUnavailable is hide; it is back when it is available again"
        case .selectionAboveMaximum(let group, let max, let selected):
            "group \"\(group)\" allows at most \(max) selected (its maxSelect) and this would select \(selected); nothing was changed: clear some of its choices first"
        case .unavailableNode(let id, let state):
            "\"\(id)\" cannot be selected now: it is \(state == "sold_out" ? "sold out" : state); nothing was changed"
        case .notVisible(let id, _):
            "\"\(id)\" is not visible: a group in its path is collapsed; POST /nodes/\(id)/reveal shows it, or page by offset"
        case .missingSession:
            "this route acts on the session the header X-Session-Id names; send the id POST /sessions returned in it"
        case .sessionInPath:
            "a session id is never taken in a URL (logs, proxies and browser history keep URLs); use GET, HEAD or DELETE /session with the id in the header X-Session-Id"
        case .notFound(let path): "no resource at \(path); the routes are \(Endpoint.routeList)"
        case .methodNotAllowed(let method, let allowed):
            "\(method) is not allowed here; use \(allowed.joined(separator: " or "))"
        case .payloadTooLarge(let limit): "request body over \(limit) bytes"
        case .tooManySessions(let limit, let retry):
            "the server holds its limit of \(limit) sessions; retry in \(retry) s or reuse an existing session"
        case .tooManyChanges(let limit):
            "this session already has \(limit) groups changed from the menu's default, the most a session may have; reset some groups to their default first, or POST /sessions for a fresh session"
        case .sessionTooLarge(let limit):
            "this change would make the session's state take more than \(limit) bytes, the most one session may hold; reset some groups to their default first (PUT /expansion resets them all), or POST /sessions for a fresh session"
        case .sessionMemoryFull(let budget, let retry):
            "the sessions held fill the server's session memory (\(budget) bytes) and none has been idle long enough to evict; retry in \(retry) s"
        case .rateLimited(let perMinute, let retry):
            "this client may create \(perMinute) sessions a minute; retry in \(retry) s, or keep using the session you have"
        case .unavailable(let reason): "the session store cannot serve requests right now (\(reason)); retry later"
        case .stopping:
            "the server is stopping and did not finish this request; retry in 1 s (another instance, or this one restarted, answers; a write may have been applied, so retry a toggle with If-Match)"
        case .searchBusy(let builds):
            "the server is building \(builds == 1 ? "a search" : "\(builds) searches") not asked for recently, the most it builds at once; retry in 1 s (a query asked recently is answered at once)"
        case .instantBusy(let builds):
            "the server is computing \(builds == 1 ? "the menu at another instant" : "the menu at \(builds) other instants") not asked for recently (?at=), the most it computes at once; retry in 1 s (an instant asked recently is answered at once)"
        case .tooManyStreams(let limit):
            "the server holds its limit of \(limit) waiting requests and streams (--max-streams); retry in \(MenuAPI.streamRetrySeconds) s, or GET /changes without wait"
        case .tooManyStreamsFromAddress(let limit):
            "this address holds its limit of \(limit) event streams (--per-ip-connections); close one, or GET /changes?wait= instead"
        case .gone(let since, let revision):
            "the changes since revision \(since) are no longer kept (the session is at revision \(revision); only its last writes since the menu before this one are); GET /rows to reload"
        case .preconditionFailed(let revision):
            "the session has moved on to revision \(revision) (another client wrote); nothing was changed: GET /changes?since=<your revision> or GET /rows, then retry with the new ETag"
        }
    }

    init(_ error: SessionStoreError) {
        switch error {
        case .unknownSession: self = .unknownSession
        case .tooManySessions(let limit, let retry): self = .tooManySessions(limit: limit, retryAfterSeconds: retry)
        case .tooManyChanges(let limit): self = .tooManyChanges(limit: limit)
        case .sessionTooLarge(let limit): self = .sessionTooLarge(limit: limit)
        case .sessionMemoryFull(let budget, let retry):
            self = .sessionMemoryFull(budget: budget, retryAfterSeconds: retry)
        case .expansion(.unknownGroup(let id)): self = .unknownGroup(id: id)
        case .expansion(.notAGroup(let id)): self = .notAGroup(id: id)
        case .expansion(.unknownNode(let id)): self = .unknownNode(id: id)
        case .selectionAboveMaximum(let group, let max, let selected):
            self = .selectionAboveMaximum(groupID: group, max: max, selected: selected)
        case .unavailable(let reason): self = .unavailable(reason)
        // MenuAPI retries these on the newer menu; should one ever get here, a retry is the answer.
        case .menuChanged: self = .unavailable("the menu was being reloaded")
        case .revisionMismatch(let current): self = .preconditionFailed(revision: current)
        }
    }
}
