/// A store whose writes wait on a remote backend and can go out without holding the calling
/// thread: the caller (an HTTP thread) starts the write, serves other requests meanwhile, and
/// finishes when the completion reports.
package protocol PipelinedSessionStore: SessionStore {
    /// Starts ``SessionStore/apply(_:to:in:if:)`` of `command` on the existing session `id`
    /// without waiting for the backend. Returns false, having changed nothing and never calling
    /// `completion`, when this write cannot start that way (no recent copy of the session here, a
    /// refusal or a no-op to decide on a fresh copy): the caller then calls `apply`. Otherwise
    /// `completion` is called exactly once, on another thread or this one (a write queued behind
    /// another write of the session that finds it cannot go out this way reports `.notWritten`).
    func startApply(
        _ command: SessionCommand, to id: SessionID, in menu: MenuGeneration, if condition: RevisionCondition?,
        then completion: @escaping @Sendable (PipelinedWrite) -> Void
    ) -> Bool
}
