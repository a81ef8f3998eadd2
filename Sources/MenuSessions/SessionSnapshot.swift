import MenuModel

/// A session as one read sees it: its state on the menu the read named, and its revision.
///
/// Invariant: `revision` is 0 when the session is created and grows by exactly 1 with every
/// write that changes the state (a hidden group toggled counts); a no-op write, a read and a
/// reload's carry-over leave it as it is. The anonymous default view is revision 0.
package struct SessionSnapshot: Sendable, Equatable {
    package var state: SessionState
    package var revision: Int

    package init(state: SessionState, revision: Int) {
        self.state = state
        self.revision = revision
    }
}
