import Foundation
import HTTPCore
import MenuModel
import MenuServiceTestSupport
import MenuSessions
import MenuTestSupport
import Synchronization
import Testing

@testable import MenuService

/// Uncached searches are bounded (`--search-builds`): past the limit a cache miss is `503 busy`
/// with `Retry-After`, while cached queries and every other route are answered as usual. The
/// tests hold slots with builds of their own that wait on a semaphore, on threads of their own,
/// so what they count does not depend on timing.
@Suite struct SearchBuildSlotTests {
    /// Runs `body` in a slot of `slots` on a thread of its own until `release` is signalled;
    /// returns once the slot is taken.
    private func hold(_ slots: SearchBuildSlots, until release: DispatchSemaphore) -> DispatchSemaphore {
        let taken = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = slots.run {
                taken.signal()
                release.wait()
            }
            done.signal()
        }
        taken.wait()
        return done
    }

    @Test func pastTheLimitABuildIsRefusedWithoutRunning() {
        let slots = SearchBuildSlots(limit: 2)
        let release = DispatchSemaphore(value: 0)
        let holders = [hold(slots, until: release), hold(slots, until: release)]
        #expect(slots.inUse == 2)
        let ran = Atomic<Int>(0)
        for _ in 0 ..< 5 { #expect(slots.run { ran.add(1, ordering: .relaxed) } == nil) }
        #expect(ran.load(ordering: .relaxed) == 0 && slots.refused == 5)
        release.signal()
        release.signal()
        for holder in holders { holder.wait() }
        #expect(slots.inUse == 0)
        #expect(slots.run { 7 } == 7)
    }

    @Test func manyThreadsNeverRunMoreBuildsThanTheLimit() {
        let slots = SearchBuildSlots(limit: 3)
        let inside = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let ran = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0 ..< 2_000 {
                _ = slots.run {
                    let now = inside.add(1, ordering: .relaxed).newValue
                    _ = most.max(now, ordering: .relaxed)
                    ran.add(1, ordering: .relaxed)
                    inside.subtract(1, ordering: .relaxed)
                }
            }
        }
        #expect(most.load(ordering: .relaxed) <= 3)
        #expect(ran.load(ordering: .relaxed) + slots.refused == 16_000)
        #expect(slots.inUse == 0)
    }

    @Test func aMissWithEverySlotTakenIsBusyWhileCachedQueriesAndRowsAreServed() throws {
        let menu = try sichuanMenu()
        let slots = SearchBuildSlots(limit: 1)
        let service = MenuAPI(store: InMemorySessionStore(menu: menu), searchSlots: slots)
        #expect(service.call("GET", "/search", query: [("q", "豆腐")]).status == 200)  // now cached
        let release = DispatchSemaphore(value: 0)
        let holder = hold(slots, until: release)

        let busy = service.call("GET", "/search", query: [("q", "麻婆")])
        #expect(busy.status == 429 && busy.errorCode == "busy")
        #expect(busy.header("Retry-After") == "1")
        let message = (busy.json["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("retry in 1 s"), "\(message)")
        for (path, query) in [("/rows", [("q", "麻婆")]), ("/count", [("filter", "spicy:2")])]
            as [(String, [(String, String?)])]
        {
            #expect(service.call("GET", path, query: query).errorCode == "busy", "\(path)")
        }
        #expect(service.call("GET", "/search", query: [("q", "豆腐")]).status == 200)
        #expect(service.call("GET", "/rows", query: [("q", "豆腐")]).status == 200)
        #expect(service.call("GET", "/rows").status == 200)
        #expect(service.current.searchCache.usage.entries == 1, "a refused miss keeps nothing")

        release.signal()
        holder.wait()
        #expect(service.call("GET", "/search", query: [("q", "麻婆")]).status == 200)
        #expect(slots.refused == 3)
    }

    @Test func anInstantNotAskedBeforeWithEverySlotTakenIsBusyWhileKnownInstantsAreServed() throws {
        let menu = try sichuanMenu()
        let slots = SearchBuildSlots(limit: 1)
        let service = MenuAPI(store: InMemorySessionStore(menu: menu), searchSlots: slots)
        let known = [("at", Optional("2026-12-24T19:30:00Z"))]
        #expect(service.call("GET", "/rows", query: known).status == 200)  // its span now kept
        let release = DispatchSemaphore(value: 0)
        let holder = hold(slots, until: release)

        // Another day: a computation, refused while the one slot is taken, on every route taking ?at=.
        for path in ["/rows", "/count", "/nodes/beer"] {
            let busy = service.call("GET", path, query: [("at", "2027-01-05T12:00:00Z")])
            #expect(busy.status == 429 && busy.errorCode == "busy", "\(path)")
            #expect(busy.header("Retry-After") == "1")
            let message = (busy.json["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("?at=") && message.contains("retry in 1 s"), "\(message)")
        }
        // A later instant of the span asked before, and reads without ?at=, are answered.
        #expect(service.call("GET", "/rows", query: [("at", "2026-12-24T19:45:00Z")]).status == 200)
        #expect(service.call("GET", "/rows").status == 200)

        release.signal()
        holder.wait()
        #expect(service.call("GET", "/rows", query: [("at", "2027-01-05T12:00:00Z")]).status == 200)
        #expect(slots.refused == 3)
    }
}
