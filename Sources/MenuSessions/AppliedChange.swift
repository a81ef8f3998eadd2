import MenuModel

/// What a store returns for an applied command: the session (new when none was given), the
/// change for the client, and the session's state and revision after it.
package struct AppliedChange: Sendable {
    package var sessionID: SessionID
    package var created: Bool
    package var change: CommandChange
    package var state: SessionState
    /// The session's ``SessionSnapshot/revision`` after the command (unchanged by a no-op).
    package var revision: Int

    package init(sessionID: SessionID, created: Bool, change: CommandChange, state: SessionState, revision: Int) {
        self.sessionID = sessionID
        self.created = created
        self.change = change
        self.state = state
        self.revision = revision
    }
}
