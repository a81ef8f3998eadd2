import Dispatch
import HTTPCore
import MenuModel
import MenuSessions
import Synchronization

/// One open `text/event-stream` of `GET /changes`: the session's changes as events, written into
/// a ``StreamedBody`` the server sends as it grows, from the first look (the `open` event) until
/// the session ends, the client leaves or the server stops.
///
/// The events (each `id:` is a revision, so an `EventSource` that reconnects sends the last one
/// as `Last-Event-ID` and resumes there):
/// - `open` (first, with a `retry:` hint): `{"version","revision","since","action"}`, where
///   `action` is `none` (nothing after `since`), `apply` (the `change` events that follow take the
///   client from `since` to `revision`) or `reload` (the history no longer reaches `since`: read
///   the rows again; the stream goes on from `revision`);
/// - `change`: `{"revision","change"}`, one write, as in `GET /changes`;
/// - `reload`: `{"version","revision"}`, the history was lost on the way (a menu reload, a
///   session rebuilt): read the rows again;
/// - `availability` (no `id`): `{"since","revision","reconfigured"}`, a change of availability
///   (``AvailabilityFeedEntry``): fetch the rows `reconfigured` names again (all when null);
/// - `end` (last): `{"reason","retry"}`: `session_ended` (deleted, expired or evicted; `retry`
///   false: do not reconnect), `store_unavailable` or `server_stopping` (`retry` true);
/// - a comment line every heartbeat, which also finds a client that left.
///
/// Lifecycle: made by ``MenuAPI`` with its first look done, registered in ``ChangeWaits``
/// (which calls ``changed()`` on news of its key and ``stop(_:)`` when the server drains), and
/// forgotten when its connection ends (``StreamedBody/onEnd(_:)``).
///
/// Invariant: looks run one at a time per stream, on one queue shared by all streams, and each
/// starts from the last revision written, so events are in revision order with none repeated; a
/// ``changed()`` during a look makes one more look. After `end` nothing is written. Cost: a store
/// read per look (news of the key, and each heartbeat: what finds a session that expired or was
/// evicted without news); a timer and a few hundred bytes per stream, besides what waits unsent
/// (at most ``StreamedBody/limit``: a client further behind is let go and resumes from its last id).
package final class ChangeStream: Sendable {
    /// What a look at the stream's key found.
    package enum Look: Sendable {
        /// The menu version (as JSON), the revision now, and the entries after the last one
        /// written (nil: the history no longer reaches it); the availability overlay's revision
        /// now and, when it moved past the one last written, the rows to fetch again.
        case changes(
            versionJSON: String, revision: Int, entries: [FeedEntry]?, availabilityRevision: Int,
            availability: AvailabilityFeedEntry?)
        /// Nothing to send yet: another instance carried the session over to a menu this one has
        /// yet to serve (``FeedChanges/onALaterMenu``); installing it wakes the stream again.
        case notYet
        /// The stream is over.
        case ended(EndReason)
    }

    /// Why a stream ended, as its `end` event says.
    package enum EndReason: String, Sendable {
        case sessionEnded = "session_ended"
        case storeUnavailable = "store_unavailable"
        case serverStopping = "server_stopping"

        /// Whether the client should reconnect.
        var retry: Bool { self != .sessionEnded }
    }

    private struct State {
        var sentRevision: Int
        /// The availability revision the client's rows show, as far as this stream told it.
        var sentAvailability: Int
        var versionJSON: String
        var looking = false
        var lookAgain = false
        var ended = false
    }

    /// The `retry:` hint, in milliseconds: how long an `EventSource` waits before reconnecting.
    package static let retryMilliseconds = 3_000
    /// Bytes that may wait unsent per stream before its client is let go.
    package static let bodyLimit = 32 * 1024

    package let key: ChangeWaits.Key
    package let body: StreamedBody
    private let lookUp: @Sendable (_ since: Int, _ availabilitySince: Int) -> Look
    private let state: Mutex<State>
    private let heartbeat: HeartbeatTimer
    private static let looks = DispatchQueue(label: "menu.change-streams")

    /// A stream of `key` whose first look since `since` found the menu `versionJSON`, the key at
    /// `revision` and `entries` after `since` (nil: the history no longer reaches it), for a
    /// client whose rows show `availabilityRevision` (after `availability`, when given); writes
    /// the `open` event and any `change` and `availability` events now. `lookUp` reads the key's
    /// changes since a revision and an availability revision, off the request path; a comment
    /// goes out every `heartbeat`.
    package init(
        key: ChangeWaits.Key, since: Int, versionJSON: String, revision: Int,
        entries: [FeedEntry]?, heartbeat interval: Duration, availabilityRevision: Int = 0,
        availability: AvailabilityFeedEntry? = nil,
        lookUp: @escaping @Sendable (_ since: Int, _ availabilitySince: Int) -> Look
    ) {
        self.key = key
        body = StreamedBody(limit: Self.bodyLimit)
        self.lookUp = lookUp
        let action = entries == nil ? "reload" : entries!.isEmpty ? "none" : "apply"
        var text = "retry: \(Self.retryMilliseconds)\nevent: open\nid: \(entries == nil ? revision : since)\n"
        let shown = availabilityRevision > 0 ? ",\"availabilityRevision\":\(availabilityRevision)" : ""
        text +=
            "data: {\"version\":\(versionJSON),\"revision\":\(revision),\"since\":\(since),\"action\":\"\(action)\"\(shown)}\n\n"
        for entry in entries ?? [] { text += Self.changeEvent(entry) }
        if let availability { text += Self.availabilityEvent(availability) }
        state = Mutex(
            State(sentRevision: revision, sentAvailability: availabilityRevision, versionJSON: versionJSON))
        body.write(Array(text.utf8))
        let timer = DispatchSource.makeTimerSource(queue: Self.looks)
        heartbeat = HeartbeatTimer(source: timer)
        let (seconds, attoseconds) = interval.components
        let milliseconds = max(1, Int(clamping: seconds) &* 1_000 &+ Int(attoseconds / 1_000_000_000_000_000))
        timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds))
        // A strong capture (no weak side table): cancelling the timer, which the body's end
        // does, releases the handler and with it the stream.
        timer.setEventHandler { [self] in beat() }
        timer.activate()
        let heartbeat = self.heartbeat
        body.onEnd { heartbeat.source.cancel() }
    }

    deinit { heartbeat.source.cancel() }

    /// Something may have changed for the key: look (now, or once more after the look running).
    package func changed() {
        let start = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            if state.looking {
                state.lookAgain = true
                return false
            }
            state.looking = true
            return true
        }
        if start { Self.looks.async { [self] in look() } }
    }

    /// Ends the stream with an `end` event saying `reason`, after what was written before.
    package func stop(_ reason: EndReason) {
        Self.looks.async { [self] in
            guard
                state.withLock({ state in
                    defer { state.ended = true }
                    return !state.ended
                })
            else { return }
            body.write(Array(Self.endEvent(reason).utf8))
            body.finish()
        }
    }

    /// Looks until no ``changed()`` came in meanwhile. On the looks queue.
    private func look() {
        while true {
            let (since, availabilitySince) = state.withLock { ($0.sentRevision, $0.sentAvailability) }
            write(lookUp(since, availabilitySince))
            let again = state.withLock { state -> Bool in
                guard state.lookAgain, !state.ended else {
                    state.looking = false
                    return false
                }
                state.lookAgain = false
                return true
            }
            guard again else { return }
        }
    }

    /// Writes the events `found` calls for. On the looks queue.
    private func write(_ found: Look) {
        let text: String? = state.withLock { state -> String? in
            guard !state.ended else { return nil }
            switch found {
            case .changes(let versionJSON, let revision, let entries, let availabilityRevision, let availability):
                if let entries {
                    let fresh = entries.filter { $0.revision > state.sentRevision }
                    // Another menu without a reload entry to it (a store that forgets at a reload):
                    // the client starts over, below.
                    let reaches = fresh.contains { if case .reload = $0 { true } else { false } }
                    if versionJSON == state.versionJSON || reaches {
                        state.sentRevision = max(state.sentRevision, revision)
                        state.versionJSON = versionJSON
                        var text = fresh.map(Self.changeEvent).joined()
                        if let availability, availability.since == state.sentAvailability {
                            state.sentAvailability = availability.revision
                            text += Self.availabilityEvent(availability)
                        }
                        return text
                    }
                }
                guard revision > state.sentRevision || versionJSON != state.versionJSON else { return nil }
                state.sentRevision = revision
                state.versionJSON = versionJSON
                state.sentAvailability = availabilityRevision  // the rows read again show it
                return "event: reload\nid: \(revision)\ndata: {\"version\":\(versionJSON),\"revision\":\(revision)}\n\n"
            case .notYet:
                return nil
            case .ended(let reason):
                state.ended = true
                return Self.endEvent(reason)
            }
        }
        guard let text, !text.isEmpty else { return }
        body.write(Array(text.utf8))
        if case .ended = found { body.finish() }
    }

    /// A heartbeat: a comment (a write that finds a client gone), then a look. On the looks queue.
    private func beat() {
        guard !state.withLock({ $0.ended }) else { return }
        guard body.write(Array(": heartbeat\n\n".utf8)) else { return }
        changed()
    }

    /// A `change` event, or for a reload entry too large to wait in the body, a `reload` event
    /// (the client starts over on the new menu instead of being let go and resuming before it).
    private static func changeEvent(_ entry: FeedEntry) -> String {
        var writer = JSONWriter(capacity: entry.encodedBound)
        entry.write(to: &writer)
        let data = writer.finish().bytes
        if case .reload(let revision, let versionJSON, _) = entry, data.count > bodyLimit / 2 {
            return "event: reload\nid: \(revision)\ndata: {\"version\":\(versionJSON),\"revision\":\(revision)}\n\n"
        }
        return "event: change\nid: \(entry.revision)\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
    }

    /// An `availability` event (no `id`: it moves no revision); `reconfigured` null when the
    /// rows would not fit the body's limit (the client fetches every row it holds).
    private static func availabilityEvent(_ entry: AvailabilityFeedEntry) -> String {
        var entry = entry
        if entry.encodedBound > bodyLimit / 2 { entry.reconfigured = nil }
        var writer = JSONWriter(capacity: entry.encodedBound)
        entry.write(to: &writer)
        return "event: availability\ndata: \(String(decoding: writer.finish().bytes, as: UTF8.self))\n\n"
    }

    private static func endEvent(_ reason: EndReason) -> String {
        "event: end\ndata: {\"reason\":\"\(reason.rawValue)\",\"retry\":\(reason.retry)}\n\n"
    }
}

/// A stream's heartbeat timer. Dispatch sources are thread-safe (scheduled, cancelled from any
/// thread); the type only says so to the compiler.
private struct HeartbeatTimer: @unchecked Sendable {
    let source: any DispatchSourceTimer
}
