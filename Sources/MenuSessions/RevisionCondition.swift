/// The revisions a conditional write (`If-Match`) accepts the session at: the store checks it
/// atomically with the write and refuses with ``SessionStoreError/revisionMismatch(current:)``
/// otherwise, changing nothing. Holds at most the few tags a client listed.
package struct RevisionCondition: Sendable, Equatable {
    package var accepted: [Int]

    package init(accepting accepted: [Int]) {
        self.accepted = accepted
    }

    package func admits(_ revision: Int) -> Bool { accepted.contains(revision) }
}
