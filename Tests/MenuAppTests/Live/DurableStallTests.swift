// A slow or failing disk under the durable store, through the test build's fault seam
// (`DurableFaults`, compiled into debug builds only), against the real server where possible.

#if DEBUG
import Foundation
import MenuAppTestSupport
import MenuModel
import Testing

@testable import MenuApp
@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable
import DurableTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension AppTests {
    @Suite("Durable: a stalled or failing disk")
    struct DurableStallTests {
        let model = LiveMenuModel.menu
        /// Top-level groups: always visible, so any of them can be toggled.
        var groups: [String] { model.topLevel.map { model.nodes[$0] }.filter { $0.children != nil }.map(\.id) }

        /// A data directory and a live server on it (`--fsync always`, `--store-timeout 1`) that can
        /// be restarted; ``close()`` clears the directory's faults, stops the server, removes the files.
        private final class Fixture {
            let directory = DurableTemporaryDirectory()
            private(set) var live: LiveServer
            var path: String { directory.path }

            init() throws { live = try Self.start(directory) }

            private static func start(_ directory: DurableTemporaryDirectory) throws -> LiveServer {
                try LiveServer { settings in
                    settings.dataDirectory = directory.path
                    settings.fsync = .always
                    settings.storeTimeoutSeconds = 1
                }
            }

            func restart() throws {
                live.shutdown()
                DurableFaults.clear(in: path)
                live = try Self.start(directory)
            }

            func close() {
                DurableFaults.clear(in: path)
                live.shutdown()
                directory.remove()
            }
        }

        /// Waits (at most 20 s) until `condition` holds.
        private func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
            let clock = ContinuousClock()
            let end = clock.now + .seconds(20)
            while try await !condition() {
                guard clock.now < end else { throw DurableTestError("\(what) did not happen within 20 s") }
                try await Task.sleep(for: .milliseconds(10))
            }
        }

        /// The state after toggling each group of `flipped` once from the defaults.
        private func state(flipping flipped: [String: Bool]) -> LiveMenuModel.State {
            var state = model.defaultState
            for (group, isFlipped) in flipped where isFlipped { state.expanded[model.node(group)!].toggle() }
            return state
        }

        /// Checks GET /rows and GET /count of `session` against the oracle's `state`.
        private func expectReads(
            _ client: LiveHTTPClient, _ session: String, show state: LiveMenuModel.State,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            let expected = model.rows(state)
            let page = try await client.get("/rows?limit=500", session: session)
            #expect(page.status == 200, "\(page)", sourceLocation: sourceLocation)
            let rows = try page.decode(LiveRowsPage.self, sourceLocation: sourceLocation)
            #expect(
                rows.count == expected.count && rows.rows == Array(expected.prefix(500)), sourceLocation: sourceLocation
            )
            let count = try await client.get("/count", session: session)
            let counted = try count.decode(LiveCount.self, sourceLocation: sourceLocation)
            let (rowCount, leafCount) = model.counts(state)
            #expect(
                counted.count == rowCount && counted.leafCount == leafCount, "\(count)", sourceLocation: sourceLocation)
        }

        @Test(
            "a stalled fsync: reads and /healthz are answered, a write answers 503 unavailable and is not applied, not even after a restart; writes succeed once the disk answers"
        )
        func stalledFlushRefusesTheWriteAndKeepsReadsAnswered() async throws {
            let fixture = try Fixture()
            defer { fixture.close() }
            let client = fixture.live.client()
            let session = try await client.newSession()
            var flipped: [String: Bool] = [:]
            #expect(try await client.toggle(groups[0], session: session).status == 200)
            flipped[groups[0]] = true

            DurableFaults.stall(.flush, in: fixture.path)
            async let stalledWrite = client.toggle(groups[1], session: session)
            try await eventually("an fdatasync stalled") { DurableFaults.stalledCalls(in: fixture.path) > 0 }
            let health = try await client.get("/healthz")
            #expect(health.status == 200, "\(health)")
            try await expectReads(client, session, show: state(flipping: flipped))
            try liveExpectError(try await stalledWrite, status: 503, code: "unavailable")
            #expect(DurableFaults.stalledCalls(in: fixture.path) > 0, "the disk is still stalled")
            try await expectReads(client, session, show: state(flipping: flipped))
            // While the disk has not answered, other writes are refused too, a new session included.
            try liveExpectError(try await client.toggle(groups[1], session: session), status: 503, code: "unavailable")
            try liveExpectError(try await client.send("POST", "/sessions"), status: 503, code: "unavailable")
            #expect(try await client.get("/healthz").status == 200)

            DurableFaults.release(.flush, in: fixture.path)
            try await eventually("a write succeeded after the disk answered") {
                try await client.toggle(groups[2], session: session).status == 200
            }
            flipped[groups[2]] = true
            try await expectReads(client, session, show: state(flipping: flipped))

            // The refused toggle reached the file before the flush stalled; a restart must not show it.
            try fixture.restart()
            try await expectReads(fixture.live.client(), session, show: state(flipping: flipped))
        }

        @Test(
            "a failed fsync: writes answer 503 unavailable, reads go on, and after a restart every acknowledged toggle is there and no refused one"
        )
        func failedFlushLosesNothingAcknowledgedAndKeepsNothingRefused() async throws {
            let fixture = try Fixture()
            defer { fixture.close() }
            let client = fixture.live.client()
            var sessions: [String] = []
            for _ in 0 ..< 3 { sessions.append(try await client.newSession()) }
            // The oracle: the parity of the acknowledged toggles of each session and group.
            var flipped: [String: [String: Bool]] = [:]
            for round in 0 ..< 7 {
                for (index, session) in sessions.enumerated() {
                    let group = groups[(round + index) % groups.count]
                    let response = try await client.toggle(group, session: session)
                    #expect(response.status == 200, "\(response)")
                    if response.status == 200 { flipped[session, default: [:]][group, default: false].toggle() }
                }
            }

            DurableFaults.fail(.flush, in: fixture.path, code: EIO)
            for round in 0 ..< 3 {
                for (index, session) in sessions.enumerated() {
                    let group = groups[(round * 2 + index) % groups.count]
                    let response = try await client.toggle(group, session: session)
                    try liveExpectError(response, status: 503, code: "unavailable")
                    if response.status == 200 { flipped[session, default: [:]][group, default: false].toggle() }
                }
            }
            #expect(try await client.get("/healthz").status == 200)
            for session in sessions {
                try await expectReads(client, session, show: state(flipping: flipped[session] ?? [:]))
            }

            try fixture.restart()
            let restarted = fixture.live.client()
            for session in sessions {
                try await expectReads(restarted, session, show: state(flipping: flipped[session] ?? [:]))
            }
            #expect(try await restarted.toggle(groups[0], session: sessions[0]).status == 200)
        }

        /// Runs `body` on a thread of its own; true when it returned within `seconds`.
        private func finishes(within seconds: Int, _ body: @escaping @Sendable () -> Void) -> Bool {
            let done = DispatchSemaphore(value: 0)
            Thread {
                body()
                done.signal()
            }.start()
            return done.wait(timeout: .now() + .seconds(seconds)) == .success
        }

        @Test("a read whose touch record is due does not wait for a stalled disk")
        func aTouchNeverMakesAReadWait() throws {
            let directory = DurableTemporaryDirectory()
            defer { directory.remove() }
            let clock = DurableTestClock()
            let store = try durableOpen(directory, fsync: .always, clock: clock)
            defer { store.close() }
            defer { DurableFaults.clear(in: directory.path) }
            let id = try store.create()
            let before = try store.state(of: id)
            clock.advance(.seconds(3600 / 8))  // past the touch interval (1/16 of the time to live)
            DurableFaults.stall(.write, in: directory.path)
            let read = LiveLocked<SessionState?>(nil)
            #expect(finishes(within: 20) { read.set(try? store.state(of: id)) }, "a read waited for the stalled disk")
            #expect(read.value == before)
        }

        @Test("shutdown with a hung fsync returns after a bounded wait and says so in the log")
        func closeDoesNotHangOnAHungFlush() throws {
            let directory = DurableTemporaryDirectory()
            defer { directory.remove() }
            let log = DurableLogRecorder()
            let store = try DurableSessionStore(
                directory: directory.path, menu: DurableFixtures.menu(), fsync: .always,
                storeTimeout: .seconds(1), log: log.log)
            defer { DurableFaults.clear(in: directory.path) }
            let id = try store.create()
            DurableFaults.stall(.flush, in: directory.path)
            let refusal = LiveLocked<SessionStoreError?>(nil)
            #expect(
                finishes(within: 20) { refusal.set(durableError { try store.apply(.toggle(groupID: "c"), to: id) }) })
            #expect(durableIsUnavailable(refusal.value))
            #expect(finishes(within: 30) { store.close() }, "close() hung on the stalled fsync")
            #expect(log.lines.contains { $0.contains("did not finish the final journal write") }, "\(log.lines)")
        }

        @Test(
            "concurrent toggles of one session apply one at a time: its state is the parity of the acknowledged toggles, also after a reopen"
        )
        func concurrentWritesOfOneSessionStayLinearizable() throws {
            let directory = DurableTemporaryDirectory()
            defer { directory.remove() }
            let menu = DurableFixtures.menu()
            let store = try durableOpen(directory, menu: menu, fsync: .always)
            let id = try store.create()
            var expected = durableExpansion(try store.state(of: id), menu: menu)
            let acknowledged = LiveLocked<[String: Int]>([:])
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                for step in 0 ..< 25 {
                    let group = (worker + step) % 2 == 0 ? "b" : "c"
                    if (try? store.apply(.toggle(groupID: group), to: id)) != nil {
                        acknowledged.update { $0[group, default: 0] += 1 }
                    }
                }
            }
            for (group, toggles) in acknowledged.value where toggles % 2 == 1 { expected[group]?.toggle() }
            #expect(acknowledged.value.values.reduce(0, +) > 0)
            #expect(durableExpansion(try store.state(of: id), menu: menu) == expected)
            store.close()
            let reopened = try durableOpen(directory, menu: menu, fsync: .always)
            defer { reopened.close() }
            #expect(durableExpansion(try reopened.state(of: id), menu: menu) == expected)
        }

        @Test("a session whose write waits for the disk is not swept meanwhile: a delete then gives back its one slot")
        func aPendingSessionIsNotSwept() throws {
            let directory = DurableTemporaryDirectory()
            defer { directory.remove() }
            let clock = DurableTestClock()
            let store = try durableOpen(directory, fsync: .always, timeToLive: .seconds(1), clock: clock)
            defer { store.close() }
            defer { DurableFaults.clear(in: directory.path) }
            let id = try store.create()
            DurableFaults.stall(.flush, in: directory.path)
            let deletion = LiveLocked<SessionStoreError??>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                deletion.set(.some(durableError { try store.delete(id) }))
                done.signal()
            }.start()
            let end = ContinuousClock.now + .seconds(20)
            while DurableFaults.stalledCalls(in: directory.path) == 0 && ContinuousClock.now < end { usleep(1000) }
            clock.advance(.seconds(2))  // the session is idle past its time to live while its delete waits
            #expect(store.sweepExpired() == 0)
            DurableFaults.release(.flush, in: directory.path)
            #expect(done.wait(timeout: .now() + .seconds(20)) == .success)
            #expect(deletion.value == .some(nil), "the delete was answered \(String(describing: deletion.value))")
            #expect(store.count == 0)
        }

        @Test("--store-timeout and MENU_STORE_TIMEOUT set the store timeout (default 2 s, 1 to 3600)")
        func storeTimeoutSetting() throws {
            func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ServerSettings? {
                guard case .run(let settings) = try ServerSettings.parse(arguments: arguments, environment: environment)
                else { return nil }
                return settings
            }
            #expect(try parse([])?.storeTimeoutSeconds == 2)
            #expect(try parse(["--store-timeout", "7"])?.storeTimeoutSeconds == 7)
            #expect(try parse([], ["MENU_STORE_TIMEOUT": "9"])?.storeTimeoutSeconds == 9)
            #expect(
                throws: SettingsError.invalidValue(
                    source: "--store-timeout", value: "0", expected: "an integer from 1 to 3600")
            ) {
                try parse(["--store-timeout=0"])
            }
        }
    }
}
#endif
