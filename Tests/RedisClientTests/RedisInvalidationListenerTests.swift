import HTTPTestSupport
import RedisClient
import RedisTestSupport
import Synchronization
import Testing

@Suite("RedisInvalidationListener: tracking invalidations over RESP2 pub/sub")
struct RedisInvalidationListenerTests {
    private let options = RedisOptions(
        timeout: .milliseconds(500), initialBackoff: .milliseconds(20), maxBackoff: .milliseconds(100))

    /// A started listener and the events it delivered so far.
    private final class Recorder: Sendable {
        let events = Mutex<[RedisInvalidationListener.Event]>([])
        var all: [RedisInvalidationListener.Event] { events.withLock { $0 } }
        func record(_ event: RedisInvalidationListener.Event) { events.withLock { $0.append(event) } }
    }

    private func startListener(_ server: RedisServerProcess) -> (RedisInvalidationListener, Recorder) {
        let recorder = Recorder()
        let listener = RedisInvalidationListener(endpoint: server.endpoint, options: options) { recorder.record($0) }
        listener.start()
        return (listener, recorder)
    }

    /// A connection whose reads are tracked, redirecting invalidations to the listener's current subscription.
    private func trackedConnection(_ server: RedisServerProcess, _ listener: RedisInvalidationListener)
        -> RedisConnection
    {
        RedisConnection(endpoint: server.endpoint, options: options) { connection throws(RedisError) in
            guard let subscription = listener.subscription else {
                throw .connectFailed("the listener is not subscribed")
            }
            let reply = try connection.command("CLIENT", "TRACKING", "on", "REDIRECT", String(subscription.clientID))
            guard reply == .status("OK") else { throw .connectFailed("CLIENT TRACKING answered \(reply)") }
            connection.mark = subscription.generation
        }
    }

    @Test func aKeyReadOnATrackedConnectionAndChangedByAnotherClientIsInvalidated() throws {
        let server = try RedisServerProcess()
        let (listener, recorder) = startListener(server)
        defer { listener.stop() }
        #expect(eventually { listener.subscription != nil })
        guard let subscription = listener.subscription else { return }
        #expect(subscription.generation == 1)
        #expect(recorder.all == [.subscribed(clientID: subscription.clientID, generation: 1)])

        let tracked = trackedConnection(server, listener)
        #expect(server.command("SET", "cached:k", "one") == .status("OK"))
        #expect(try tracked.command("GET", "cached:k") == .bulk(Array("one".utf8)))
        #expect(tracked.mark == 1)
        #expect(server.command("SET", "cached:k", "two") == .status("OK"))
        #expect(eventually { recorder.all.contains(.invalidated(keys: [Array("cached:k".utf8)])) })

        #expect(try tracked.command("GET", "cached:k") == .bulk(Array("two".utf8)))  // tracked again after the invalidation
        #expect(server.command("FLUSHALL") == .status("OK"))
        #expect(eventually { recorder.all.last == .flushAll })
        #expect(listener.subscription?.clientID == subscription.clientID)  // a null key list is not a loss
    }

    @Test func killingTheListenersConnectionGivesFlushAllThenANewerSubscription() throws {
        let server = try RedisServerProcess()
        let (listener, recorder) = startListener(server)
        defer { listener.stop() }
        #expect(eventually { listener.subscription != nil })
        guard let first = listener.subscription else { return }
        #expect(server.command("CLIENT", "KILL", "ID", String(first.clientID)) == .integer(1))
        #expect(eventually { (listener.subscription?.generation ?? 0) > first.generation })
        guard let second = listener.subscription else { return }
        #expect(second.clientID != first.clientID)
        #expect(second.generation == first.generation + 1)
        #expect(
            recorder.all == [
                .subscribed(clientID: first.clientID, generation: 1), .flushAll,
                .subscribed(clientID: second.clientID, generation: 2)
            ])

        // The new subscription delivers: a connection that redirects to it sees its key invalidated.
        let tracked = trackedConnection(server, listener)
        _ = try tracked.command("GET", "after")
        #expect(tracked.mark == second.generation)
        #expect(server.command("SET", "after", "x") == .status("OK"))
        #expect(eventually { recorder.all.contains(.invalidated(keys: [Array("after".utf8)])) })
    }

    @Test func aRestartedServerIsReportedAsALossAndResubscribed() throws {
        let server = try RedisServerProcess()
        let (listener, recorder) = startListener(server)
        defer { listener.stop() }
        #expect(eventually { listener.subscription != nil })
        server.kill()
        #expect(eventually { recorder.all.contains(.flushAll) })
        #expect(listener.subscription == nil)
        try server.restart()
        #expect(eventually { listener.subscription?.generation == 2 })
    }

    @Test func aStalledServerIsNoticedByAnUnansweredPingAndResubscribedAfterItResumes() throws {
        let server = try RedisServerProcess()
        let recorder = Recorder()
        let quick = RedisOptions(
            timeout: .milliseconds(200), initialBackoff: .milliseconds(20), maxBackoff: .milliseconds(100))
        let listener = RedisInvalidationListener(
            endpoint: server.endpoint, options: quick, idlePing: .milliseconds(100)
        ) { recorder.record($0) }
        listener.start()
        defer { listener.stop() }
        #expect(eventually { listener.subscription != nil })
        server.pause()  // no EOF, no answer: only the PING notices
        #expect(eventually(within: .seconds(10)) { recorder.all.contains(.flushAll) })
        #expect(listener.subscription == nil)
        server.resume()
        #expect(eventually { listener.subscription.map { $0.generation >= 2 } ?? false })
    }

    @Test func stopReturnsWithTheThreadEndedAndNoLaterEvents() throws {
        let server = try RedisServerProcess()
        let (listener, recorder) = startListener(server)
        #expect(eventually { listener.subscription != nil })
        listener.stop()
        #expect(listener.subscription == nil)
        let seen = recorder.all.count
        #expect(eventually { server.command("CLIENT", "LIST").text?.contains("cmd=subscribe") == false })
        #expect(server.command("FLUSHALL") == .status("OK"))
        server.stop()
        #expect(recorder.all.count == seen)
    }
}
