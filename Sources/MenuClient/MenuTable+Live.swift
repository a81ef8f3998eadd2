import Foundation
import Synchronization

/// Changes made elsewhere reaching the table by themselves: the changes feed as a stream of
/// server-sent events (`GET /changes` with `Accept: text/event-stream`), which carries each write
/// of the session as it happens, from any device, tab or instance; where the server or a proxy
/// on the way does not stream, a long poll of the same feed (`GET /changes?since=&wait=`).
extension MenuTable {
    /// What other writers did to the session, as it happens, for as long as the sequence is
    /// iterated (cancel the iterating task, or drop the sequence, to stop; keep it to the app's
    /// time in the foreground, and iterate again on resume: the first look catches up from the
    /// table's revision). Each element is what one step did to the table, as ``sync()`` reports
    /// it: `.changed` for each splice (a menu reload too, when the server's feed has its entry),
    /// `.reloaded` when the menu changed with no such entry or the history no longer reaches the
    /// table's revision, `.sessionRecreated` after the session was lost.
    ///
    /// A dropped stream is opened again after the server's `retry:` hint (3 s), with
    /// `Last-Event-ID`, so nothing is missed or applied twice; a failed one (no network, a 503)
    /// after 1, 2, 4 … 30 s. An answer that is not a stream (a server or proxy that does not
    /// stream) switches the sequence to long polls.
    ///
    /// Cost: one request open at a time; no lock is held while it waits, so the table's own reads
    /// and writes go on (the stream echoes the table's own writes, which are skipped).
    public func liveChanges() -> AsyncStream<[MenuTableEvent]> {
        AsyncStream { continuation in
            let task = Task {
                var failures = 0
                var streams = true
                var lastEventID: String?
                while !Task.isCancelled {
                    do {
                        if streams {
                            let outcome = try await followStream(lastEventID: &lastEventID) {
                                if !$0.isEmpty { continuation.yield($0) }
                            }
                            failures = 0
                            switch outcome {
                            case .notAStream: streams = false
                            case .ended(let retry):
                                do { try await Task.sleep(nanoseconds: UInt64(retry) * 1_000_000) } catch { break }
                            }
                        } else {
                            let events = try await waitForChanges()
                            failures = 0
                            if !events.isEmpty { continuation.yield(events) }
                        }
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

    /// How one stream ended.
    enum StreamOutcome: Equatable {
        /// The answer was not a stream: follow by long polls instead.
        case notAStream
        /// Open another after this many milliseconds.
        case ended(retryMilliseconds: Int)
    }

    /// Follows one event stream from the table's revision until it ends, applying its events (and
    /// handing what they did to `report`); `lastEventID` is kept up to date for the next one.
    func followStream(lastEventID: inout String?, report: ([MenuTableEvent]) -> Void) async throws(MenuClientError)
        -> StreamOutcome
    {
        let (revision, availability) = state.withLock { ($0.revision, $0.availability) }
        // Idle for four default heartbeats (15 s each) before the stream counts as dropped.
        let (stream, sessionID) = try await session.changeStream(
            since: revision, availabilitySince: availability, lastEventID: lastEventID,
            idleTimeout: max(60, session.configuration.timeout))
        defer { stream.cancel() }
        let head: MenuEventStream.Head
        let body: Data
        do {
            (head, body) = try await stream.start()
        } catch {
            throw .transport("GET /changes (event stream): \(error.localizedDescription)")
        }
        guard head.isEventStream else {
            let answer = MenuHTTPAnswer(status: head.status, headers: head.headers, body: body)
            if head.status == 200 { return .notAStream }
            if answer.error.code == "unknown_session" {
                report(
                    try await writes.withLock { () async throws(MenuClientError) in
                        try await recoverLocked(failedID: sessionID)
                    })
                lastEventID = nil
                return .ended(retryMilliseconds: 0)
            }
            if head.status == 410 || head.status == 400 {
                lastEventID = nil  // a Last-Event-ID of another session or menu: start from the table
                report(try await sync())
                return .ended(retryMilliseconds: 0)
            }
            throw answer.error
        }
        var version = state.withLock { $0.version }
        do {
            for try await event in stream.events {
                lastEventID = event.lastEventID
                let fields = (try? JSONSerialization.jsonObject(with: Data(event.data.utf8))) as? [String: Any] ?? [:]
                switch event.type {
                case "open":
                    version = fields["version"] as? String ?? version
                    if fields["action"] as? String == "reload" { report(try await sync()) }
                case "change":
                    report(try await applyStreamed(event.data, version: version))
                    if let reload = fields["reload"] as? [String: Any], let next = reload["version"] as? String {
                        version = next
                    }
                case "reload":
                    version = fields["version"] as? String ?? version
                    report(try await sync())
                case "availability":
                    report(try await applyStreamedAvailability(event.data))
                case "end":
                    guard fields["retry"] as? Bool == false else {
                        return .ended(retryMilliseconds: stream.retryMilliseconds ?? 3_000)
                    }
                    // The session ended: the catch-up makes a new one (from the layout), then a
                    // stream of it follows.
                    report(try await sync())
                    lastEventID = nil
                    return .ended(retryMilliseconds: 0)
                default:
                    break
                }
            }
        } catch let error as MenuClientError {
            throw error
        } catch {
            throw .transport("GET /changes (event stream): \(error.localizedDescription)")
        }
        return .ended(retryMilliseconds: stream.retryMilliseconds ?? 3_000)
    }

    /// One `change` event (`{"revision","change"}` or `{"revision","reload"}`) applied to the table as it is now: skipped
    /// when the table has it already (its own write, echoed), applied when it is the next
    /// revision, and a catch-up from the feed when revisions are missing.
    private func applyStreamed(_ data: String, version: String) async throws(MenuClientError) -> [MenuTableEvent] {
        let entry: MenuChangesAnswer.Entry
        do {
            entry = try JSONDecoder().decode(MenuChangesAnswer.Entry.self, from: Data(data.utf8))
        } catch {
            throw .unexpectedAnswer(
                status: 200, detail: "cannot read a change event from \(data.prefix(300)): \(error)")
        }
        return try await writes.withLock { () async throws(MenuClientError) -> [MenuTableEvent] in
            let revision = state.withLock { $0.revision }
            if entry.revision <= revision { return [] }
            if entry.revision > revision + 1 { return try await catchUpLocked() }
            let feed = MenuChangesAnswer(
                version: entry.reload?.version ?? version, revision: entry.revision, changes: [entry])
            let body: Data
            do { body = try JSONEncoder().encode(feed) } catch { return try await catchUpLocked() }
            let sessionID = await session.id ?? ""
            return try await applyFeedLocked(
                MenuHTTPAnswer(status: 200, headers: [:], body: body), sessionID: sessionID)
        }
    }

    /// One `availability` event applied: the rows it names dropped (``apply(_:)-(MenuAvailabilityChange)``)
    /// when it starts from the table's availability revision; otherwise, or when it cannot be
    /// applied, a catch-up from the feed.
    private func applyStreamedAvailability(_ data: String) async throws(MenuClientError) -> [MenuTableEvent] {
        guard let change = try? JSONDecoder().decode(MenuAvailabilityChange.self, from: Data(data.utf8)) else {
            throw .unexpectedAnswer(status: 200, detail: "cannot read an availability event from \(data.prefix(300))")
        }
        return try await writes.withLock { () async throws(MenuClientError) -> [MenuTableEvent] in
            guard change.since == state.withLock({ $0.availability }), let applied = apply(change) else {
                return try await revalidateLocked()
            }
            return applied
        }
    }

    /// The seconds a long poll asks the server to wait: the request's timeout less 5 s, 1 to 60.
    var longPollSeconds: Int { max(1, min(60, Int(session.configuration.timeout) - 5)) }

    /// One long poll from the table's revision, then what it brought applied (holding the
    /// writes lock only for that, on the table as it is by then).
    func waitForChanges() async throws(MenuClientError) -> [MenuTableEvent] {
        let (revision, availability) = state.withLock { ($0.revision, $0.availability) }
        let (answer, sessionID) = try await session.send(
            "GET", "changes",
            query: [
                ("since", String(revision)), ("wait", String(longPollSeconds)),
                ("availabilitySince", String(availability))
            ])
        return try await writes.withLock { () async throws(MenuClientError) -> [MenuTableEvent] in
            try await applyFeedLocked(answer, sessionID: sessionID)
        }
    }
}
