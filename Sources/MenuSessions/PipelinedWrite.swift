/// How a write started by ``PipelinedSessionStore/startApply(_:to:in:if:then:)`` ended.
package enum PipelinedWrite: Sendable {
    /// Written: the store holds the change, as `apply` would have answered it.
    case applied(AppliedChange)
    /// Nothing was written (another instance changed the session first, the backend lost its
    /// script): decide the write again with ``SessionStore/apply(_:to:in:if:)``.
    case notWritten
    /// Failed as `apply` would have failed (for a lost connection: the write may or may not have
    /// been made, so it must not simply be made again).
    case failed(SessionStoreError)
}
