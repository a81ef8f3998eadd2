// A request whose task is cancelled ends, and the client goes on answering: Foundation's own
// `URLSession.data(for:)` deadlocks when the cancel meets the answer (swift-corelibs-foundation#5412),
// which wedged a terminal client's search on Enter.

import Foundation
import MenuClient
import Testing

@Suite(.timeLimit(.minutes(2))) struct CancelledRequestTests {
    @Test func requestsCancelledAsTheyAreAnsweredAllEndAndTheNextRequestIsAnswered() async throws {
        let server = try ClientTestServer(config: ClientTestMenus.large(groups: 2, subgroups: 2, leaves: 2))
        defer { server.shutdown() }
        let session = MenuSession(configuration: server.configuration)
        var ended = 0
        var cancelled = 0
        // 40 rounds of 50 requests each cancelled about when its answer arrives. With the deadlock
        // the group never ends and the time limit fails the test.
        for round in 0 ..< 40 {
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0 ..< 50 {
                    group.addTask {
                        do throws(MenuClientError) {
                            _ = try await session.summary()
                            return true
                        } catch {
                            return false
                        }
                    }
                }
                try? await Task.sleep(for: .microseconds(100 * (round % 20 + 1)))
                group.cancelAll()
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            ended += outcomes.count
            cancelled += outcomes.count(where: { !$0 })
        }
        #expect(ended == 2_000)
        #expect(cancelled > 0, "no request was cancelled: the test did not test it")
        let summary = try await session.summary()
        #expect(!summary.version.isEmpty)
    }
}
