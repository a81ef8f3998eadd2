import MenuModel

/// Why a session store refused a request.
package enum SessionStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The id is well-formed but names no live session (never issued, expired or deleted).
    case unknownSession
    /// The store holds its maximum number of sessions, none of them idle long enough to evict.
    case tooManySessions(limit: Int, retryAfterSeconds: Int)
    /// The change would make the session hold more than `limit` changed groups.
    case tooManyChanges(limit: Int)
    /// The change (or a new session's state) would make the session's state hold more than
    /// `limit` bytes (``SessionLimits/maxStateBytes``).
    case sessionTooLarge(limit: Int)
    /// The sessions held fill the byte budget (`budget`, ``SessionLimits/sessionMemory``) and
    /// none has been idle long enough to evict; the oldest will be in `retryAfterSeconds`.
    case sessionMemoryFull(budget: Int, retryAfterSeconds: Int)
    /// The change names no group or a row.
    case expansion(ExpansionError)
    /// The selection would choose `selected` leaves under the group `groupID`, more than its
    /// `maxSelect` (`max`) and more than it chose before: nothing was changed.
    case selectionAboveMaximum(groupID: String, max: Int, selected: Int)
    /// The store cannot serve the call now (disk full, storage down); `reason` says whether a
    /// write may still land (a shared backend that timed out) or surely did not.
    case unavailable(reason: String)
    /// The session was already carried over to a newer menu than the one the call named (a
    /// reload happened while the request ran): nothing was changed; call again with the current
    /// menu. Callers retry; it never reaches a client.
    case menuChanged
    /// A conditional write found the session at `current`, a revision its ``RevisionCondition``
    /// does not accept (another client wrote first): nothing was changed.
    case revisionMismatch(current: Int)

    package var description: String {
        switch self {
        case .unknownSession: "unknown session"
        case .tooManySessions(let limit, _): "the server holds its limit of \(limit) sessions"
        case .tooManyChanges(let limit): "the session already holds its limit of \(limit) changed groups"
        case .sessionTooLarge(let limit): "the session's state would take more than its limit of \(limit) bytes"
        case .sessionMemoryFull(let budget, _): "the sessions held fill the session memory budget of \(budget) bytes"
        case .expansion(let error): error.description
        case .selectionAboveMaximum(let group, let max, let selected):
            "group \"\(group)\" allows at most \(max) selected (maxSelect); this would select \(selected)"
        case .unavailable(let reason): "session storage unavailable: \(reason)"
        case .menuChanged: "the menu was reloaded while the request ran"
        case .revisionMismatch(let current): "the session is at revision \(current), not the one the write expected"
        }
    }
}
