// A request whose task is cancelled ends, and the client goes on answering: Foundation's own
// `URLSession.data(for:)` deadlocks when the cancel meets the answer (swift-corelibs-foundation#5412),
// which wedged a terminal client's search on Enter.

import Foundation
import HTTPTestSupport
import MenuClient
import Testing

@Suite(.timeLimit(.minutes(10))) struct CancelledRequestTests {
    /// `rounds` rounds of `requests` calls of `call` at once, cancelled about when their answers
    /// arrive (after 100 µs, 200 µs, …): how many ended, and how many of those failed.
    static func cancelledCalls(
        rounds: Int, requests: Int, _ call: @escaping @Sendable () async throws(MenuClientError) -> Void
    ) async -> (ended: Int, failed: Int) {
        var (ended, failed) = (0, 0)
        for round in 0 ..< rounds {
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0 ..< requests {
                    group.addTask {
                        do throws(MenuClientError) {
                            try await call()
                            return true
                        } catch {
                            return false
                        }
                    }
                }
                try? await Task.sleep(for: .microseconds(100 * (round % 10 + 1)))
                group.cancelAll()
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            ended += outcomes.count
            failed += outcomes.count(where: { !$0 })
        }
        return (ended, failed)
    }

    @Test func requestsCancelledAsTheyFailToConnectAllEnd() async throws {
        // A refused connection fails at once, so the cancel meets the failure's delivery. With
        // Foundation's own data(for:) 3 runs of 4 deadlocked here (the group never ends and the
        // suite's time limit fails the test); every request fails, refused or cancelled.
        let nobody = try RefusingLoopbackPort()
        defer { nobody.close() }
        let session = MenuSession(
            configuration: MenuClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(nobody.port)")!))
        let (ended, failed) = await Self.cancelledCalls(rounds: 40, requests: 50) { () throws(MenuClientError) in
            _ = try await session.summary()
        }
        #expect(ended == 2_000 && failed == 2_000)
    }

    @Test func requestsCancelledAsTheyAreAnsweredAllEndAndTheNextRequestIsAnswered() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 2))
        defer { server.shutdown() }
        let session = MenuSession(configuration: server.configuration)
        // Some are answered, some cancelled, as the timing falls: every one ends either way.
        let (ended, _) = await Self.cancelledCalls(rounds: 10, requests: 20) { () throws(MenuClientError) in
            _ = try await session.summary()
        }
        #expect(ended == 200)
        let summary = try await session.summary()
        #expect(!summary.version.isEmpty)
    }
}
