import Foundation
import Synchronization

/// Changes made elsewhere reaching the table by themselves: a long poll of the changes feed
/// (`GET /changes?since=&wait=`) that the server answers as soon as another device, tab or
/// instance writes the session.
extension MenuTable {
    /// What other writers did to the session, as it happens, for as long as the sequence is
    /// iterated (cancel the iterating task, or drop the sequence, to stop; keep it to the app's
    /// time in the foreground). Each element is what one catch-up did to the table, as
    /// ``sync()`` reports it: `.changed` for each splice, `.reloaded` when the menu changed or
    /// the history no longer reaches the table's revision, `.sessionRecreated` after the session
    /// was lost. A failed poll (no network, a server stopping) is retried after 1, 2, 4 … 30 s;
    /// a `503` first as ``MenuClientConfiguration/unavailableRetry`` says.
    ///
    /// Cost: one request open at a time, answered within the configuration's `timeout` (the wait
    /// asked is 5 s less, at most 60 s); no lock is held while it waits, so the table's own reads
    /// and writes go on.
    public func liveChanges() -> AsyncStream<[MenuTableEvent]> {
        AsyncStream { continuation in
            let task = Task {
                var failures = 0
                while !Task.isCancelled {
                    do {
                        let events = try await waitForChanges()
                        failures = 0
                        if !events.isEmpty { continuation.yield(events) }
                    } catch {
                        guard !Task.isCancelled else { break }
                        failures += 1
                        let delay = min(30, 1 << min(failures - 1, 5))
                        do { try await Task.sleep(nanoseconds: UInt64(delay) * 1_000_000_000) } catch { break }
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The seconds a long poll asks the server to wait: the request's timeout less 5 s, 1 to 60.
    var longPollSeconds: Int { max(1, min(60, Int(session.configuration.timeout) - 5)) }

    /// One long poll from the table's revision, then what it brought applied (holding the
    /// writes lock only for that, on the table as it is by then).
    func waitForChanges() async throws(MenuClientError) -> [MenuTableEvent] {
        let revision = state.withLock { $0.revision }
        let (answer, sessionID) = try await session.send(
            "GET", "changes", query: [("since", String(revision)), ("wait", String(longPollSeconds))])
        return try await writes.withLock { () async throws(MenuClientError) -> [MenuTableEvent] in
            try await applyFeedLocked(answer, sessionID: sessionID)
        }
    }
}
