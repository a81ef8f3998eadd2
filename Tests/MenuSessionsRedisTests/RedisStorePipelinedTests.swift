import Foundation
import HTTPTestSupport
import MenuModel
import MenuSessions
import MenuTestSupport
import RedisClient
import RedisTestSupport
import Synchronization
import Testing

@testable import MenuSessionsRedis

/// Waits (30 s at most) for the outcome of one pipelined write.
private final class WriteWaiter: Sendable {
    private let outcome = Mutex<PipelinedWrite?>(nil)
    private let done = DispatchSemaphore(value: 0)

    var completion: @Sendable (PipelinedWrite) -> Void {
        { write in
            self.outcome.withLock { $0 = write }
            self.done.signal()
        }
    }

    func wait() -> PipelinedWrite? {
        _ = done.wait(timeout: .now() + 30)
        return outcome.withLock { $0 }
    }
}

/// The order in which pipelined writes were answered, by the names the test gave them.
private final class CompletionOrder: Sendable {
    private let answered = Mutex<[String]>([])

    var names: [String] { answered.withLock { $0 } }

    /// A completion that notes `name`, then hands the outcome to `waiter`.
    func noting(_ name: String, _ waiter: WriteWaiter) -> @Sendable (PipelinedWrite) -> Void {
        let completion = waiter.completion
        return { write in
            self.answered.withLock { $0.append(name) }
            completion(write)
        }
    }
}

extension RedisSessionStore {
    /// `startApply` on the current menu, waited for; nil when it did not start.
    fileprivate func pipelinedApply(
        _ command: SessionCommand, to id: SessionID, if condition: RevisionCondition? = nil
    ) -> PipelinedWrite? {
        let waiter = WriteWaiter()
        guard startApply(command, to: id, in: currentMenu, if: condition, then: waiter.completion) else { return nil }
        return waiter.wait()
    }
}

/// Writes sent through the pipeline (``PipelinedSessionStore``): they start only where the
/// blocking write would not read first, land exactly as it would, and hand everything else back.
@Suite("Redis store: pipelined writes", .serialized)
struct RedisStorePipelinedTests {
    @Test(arguments: [true, false])
    func aWriteOfASessionHeldHereLandsAsApplyWouldAndOthersReadIt(cache: Bool) throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let one = try fixture.store(MenuGeneration(menu), cache: cache)
        let two = try fixture.store(MenuGeneration(menu), cache: cache)
        let id = try one.create()
        let before = fixture.calls(["evalsha", "hmget"])
        for revision in 1 ... 4 {
            guard case .applied(let applied) = one.pipelinedApply(.toggle(groupID: "d"), to: id) else {
                Issue.record("write \(revision) was not applied")
                return
            }
            #expect(applied.revision == revision)
            #expect(expandedGroups(applied.state, on: menu).contains("d") == (revision % 2 == 1))
            #expect(try one.snapshot(of: id).revision == revision)  // read-your-writes on the writer
        }
        // One EVALSHA per write, none to read first (the HMGET inside each script is its own read of
        // the record); with the cache the reads after them cost nothing.
        #expect(
            fixture.calls(["evalsha", "hmget"]) == [
                "evalsha": before["evalsha"]! + 4, "hmget": before["hmget"]! + 4 + (cache ? 0 : 4)
            ])
        let seen = try two.snapshot(of: id)
        #expect(seen.revision == 4)
        #expect(!expandedGroups(seen.state, on: menu).contains("d"))
        let changes = try two.changes(of: id, since: 0, in: two.currentMenu)
        #expect(changes.revision == 4)
        #expect(changes.entries?.count == 4)  // the history came along
    }

    @Test func writesOfOneSessionStartedTogetherAllGoOutPipelinedOneAfterAnother() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let store = try fixture.store(MenuGeneration(menu))
        let id = try store.create()
        let waiters = (0 ..< 21).map { _ in WriteWaiter() }
        for waiter in waiters {  // none waits for the one before: each queues behind it
            #expect(
                store.startApply(.toggle(groupID: "d"), to: id, in: store.currentMenu, if: nil, then: waiter.completion)
            )
        }
        let revisions = waiters.map { waiter -> Int? in
            guard case .applied(let applied)? = waiter.wait() else { return nil }
            return applied.revision
        }
        #expect(revisions == Array(1 ... 21))  // in order, each on the copy the one before left
        let final = try store.snapshot(of: id)
        #expect(final.revision == 21)
        #expect(expandedGroups(final.state, on: menu).contains("d"))
    }

    /// All of an instance's Redis work goes over one pipeline, but a session's writes wait in its
    /// own gate, one in the pipeline at a time: a hot session's queue never goes ahead of another
    /// session's write. Counted with Redis frozen (SIGSTOP) while every write is started.
    @Test func anotherSessionsWriteIsNotQueuedBehindAHotSessionsWrites() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let store = try fixture.store(MenuGeneration(menu), timeout: .seconds(30))  // nothing times out while frozen
        let hot = try store.create()
        var other = try store.create()
        // Gates are shared by id (1 in 1,024 pairs): another session, one of its own.
        for _ in 0 ..< 8 where store.writeGate(of: other) === store.writeGate(of: hot) { other = try store.create() }
        for id in [hot, other] {  // a copy of each here (a write is pipelined only on one), the pipeline connected
            guard case .applied = store.pipelinedApply(.toggle(groupID: "d"), to: id) else {
                Issue.record("warm-up write failed")
                return
            }
        }
        let order = CompletionOrder()
        fixture.server.pause()
        let hotWrites = 20
        let waiters = (0 ... hotWrites).map { _ in WriteWaiter() }
        for index in 0 ..< hotWrites {
            #expect(
                store.startApply(
                    .toggle(groupID: "d"), to: hot, in: store.currentMenu, if: nil,
                    then: order.noting("hot", waiters[index])))
        }
        #expect(
            store.startApply(
                .toggle(groupID: "d"), to: other, in: store.currentMenu, if: nil,
                then: order.noting("other", waiters[hotWrites])))
        fixture.server.resume()
        let applied = waiters.filter { if case .applied? = $0.wait() { true } else { false } }.count
        #expect(applied == hotWrites + 1)
        let names = order.names
        let hotFirst = names.prefix { $0 != "other" }.count
        #expect(
            hotFirst <= 1,
            "\(hotFirst) of the hot session's \(hotWrites) writes were answered before the other session's: \(names)")
        #expect(names.count == hotWrites + 1)
    }

    @Test func aRequestThatTimedOutQueuedBehindOtherSessionsWorkSaysSo() throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try storeTestMenu()))
        guard case .unavailable(let reason) = store.unavailable(.queuedTooLong(waited: .milliseconds(300), ahead: 2))
        else {
            Issue.record("not an unavailable store")
            return
        }
        #expect(
            reason.contains(
                "waited 300 ms (--redis-timeout) queued behind 2 other commands (other sessions' writes and reads)"),
            "\(reason)")
        #expect(reason.contains("it was not sent, nothing was changed"), "\(reason)")
    }

    @Test func aWriteThatNeedsAReadOrADecisionDoesNotStartAndChangesNothing() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let one = try fixture.store(MenuGeneration(menu))
        let two = try fixture.store(MenuGeneration(menu))
        let id = try one.create()
        let before = fixture.calls(["evalsha"])
        #expect(two.pipelinedApply(.toggle(groupID: "a"), to: id) == nil)  // no copy on `two`: apply reads first
        #expect(one.pipelinedApply(.set(groupID: "a", isExpanded: true), to: id) == nil)  // a no-op: decided on a fresh copy
        #expect(one.pipelinedApply(.toggle(groupID: "a"), to: id, if: RevisionCondition(accepting: [7])) == nil)  // a refusal, likewise
        #expect(one.pipelinedApply(.toggle(groupID: "nope"), to: id) == nil)  // the menu's refusal: apply reports it
        #expect(fixture.calls(["evalsha"]) == before)
        let off = try fixture.store(MenuGeneration(menu), pipelined: false)
        _ = try off.snapshot(of: id)
        #expect(off.pipelinedApply(.toggle(groupID: "a"), to: id) == nil)
        #expect(try two.snapshot(of: id).revision == 0)
    }

    @Test func aWriteAnotherInstanceBeatIsHandedBackAndApplyMakesItOnTheirRecord() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        // No cache: nothing tells `one` that `two` wrote, so its copy (the write basis) is behind.
        let one = try fixture.store(MenuGeneration(menu), cache: false)
        let two = try fixture.store(MenuGeneration(menu), cache: false)
        let id = try one.create()
        _ = try one.apply(.toggle(groupID: "a"), to: id)
        _ = try two.apply(.toggle(groupID: "c"), to: id)
        guard case .notWritten = one.pipelinedApply(.toggle(groupID: "e"), to: id) else {
            Issue.record("a write over a revision Redis no longer holds was not handed back")
            return
        }
        #expect(try two.snapshot(of: id).revision == 2)  // nothing written
        let applied = try one.apply(.toggle(groupID: "e"), to: id)
        #expect(applied.revision == 3)
        #expect(expandedGroups(applied.state, on: menu).isDisjoint(with: ["a", "c", "e"]))  // all three toggles kept
    }

    @Test func concurrentPipelinedAndBlockingWritesOfSharedSessionsLoseNothing() throws {
        let fixture = try RedisStoreFixture()
        let menu = try storeTestMenu()
        let stores = try (0 ..< 2).map { _ in try fixture.store(MenuGeneration(menu), timeout: .seconds(5)) }
        let ids = try (0 ..< 3).map { _ in try stores[0].create() }
        let toggles = Mutex([Int](repeating: 0, count: ids.count))  // acknowledged toggles of "d", per session
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let store = stores[worker % 2]
            for round in 0 ..< 40 {
                let session = (worker + round) % ids.count
                let id = ids[session]
                _ = try? store.snapshot(of: id)  // a copy here, so most writes can start pipelined
                var written = false
                switch store.pipelinedApply(.toggle(groupID: "d"), to: id) {
                case .applied?: written = true
                case .failed(let error)?: failures.withLock { $0.append("\(error)") }
                case .notWritten?, nil:
                    do {
                        _ = try store.apply(.toggle(groupID: "d"), to: id)
                        written = true
                    } catch { failures.withLock { $0.append("\(error)") } }
                }
                if written { toggles.withLock { $0[session] += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let counts = toggles.withLock { $0 }
        #expect(counts.reduce(0, +) == 8 * 40)
        for (session, id) in ids.enumerated() {
            let final = try stores[1].snapshot(of: id, in: stores[1].currentMenu, atLeast: counts[session])
            #expect(final.revision == counts[session])  // one revision per acknowledged toggle
            #expect(expandedGroups(final.state, on: menu).contains("d") == (counts[session] % 2 == 1))
        }
    }

    @Test func aFrozenRedisFailsThePipelinedWriteWithinTheTimeoutAndFreesTheSession() throws {
        let fixture = try RedisStoreFixture()
        let store = try fixture.store(MenuGeneration(try storeTestMenu()))
        let id = try store.create()
        _ = try store.apply(.toggle(groupID: "a"), to: id)
        fixture.server.pause()
        let started = ContinuousClock.now
        let outcome = store.pipelinedApply(.toggle(groupID: "c"), to: id)
        let waited = ContinuousClock.now - started
        fixture.server.resume()
        guard case .failed(.unavailable(let reason))? = outcome else {
            Issue.record("answered \(String(describing: outcome))")
            return
        }
        #expect(reason.contains("may or may not have been applied"))
        #expect(waited < .seconds(5))  // the 300 ms timeout, on a loaded machine
        // The session's gate was given back: the next write goes through once Redis is back.
        #expect(eventually { (try? store.apply(.toggle(groupID: "e"), to: id)) != nil })
    }
}
