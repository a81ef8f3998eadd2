import DurableTestSupport
import Foundation
import MenuAppTestSupport
import MenuModel
import Synchronization
import Testing

@testable import MenuService
@testable import MenuSessions
@testable import MenuSessionsDurable

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Measurements, not checks: toggle latency per fsync policy through the real executable, and
/// replay time for many sessions. Off by default; run with
/// `MENU_DURABLE_FIGURES=1 swift test --filter DurableFigures` (set `MENU_DURABLE_EXECUTABLE` to a
/// release build's path for release figures).
@Suite(
    "DurableFigures", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["MENU_DURABLE_FIGURES"] == "1",
        "figures are measured only with MENU_DURABLE_FIGURES=1"))
struct DurableFiguresTests {
    private func start(_ data: String, _ config: String, _ policy: FsyncPolicy) throws -> LiveChildServer {
        try LiveChildServer(
            arguments: ["--port", "0", "--data-dir", data, "--fsync", policy.rawValue, "--config", config],
            executable: ProcessInfo.processInfo.environment["MENU_DURABLE_EXECUTABLE"])
    }

    private func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    @Test("toggle latency and throughput per fsync policy (real executable, keep-alive connections)")
    func toggleLatency() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let config = directory.file("menu.json")
        try DurableFixtures.menuJSON.write(toFile: config, atomically: true, encoding: .utf8)
        for policy in FsyncPolicy.allCases {
            let data = directory.file("data-\(policy.rawValue)")
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
            let server = try start(data, config, policy)
            defer { _ = server.signalAndWait(SIGTERM, timeoutSeconds: 30) }
            let connection = try LiveRawConnection(port: server.port)
            let session = try connection.request("POST", "/sessions").header("X-Session-Id")!
            var latencies: [Double] = []
            for step in 0 ..< 3000 {
                let start = ContinuousClock.now
                _ = try connection.request(
                    "POST", "/groups/\(DurableFixtures.groups[step % 5])/toggle", headers: [("X-Session-Id", session)])
                latencies.append(Double((ContinuousClock.now - start) / .nanoseconds(1)) / 1000)
            }
            latencies.sort()
            // Throughput with 4 connections at once (group commit shares flushes).
            let port = server.port
            let done = Atomic<Int>(0)
            let started = ContinuousClock.now
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                guard let connection = try? LiveRawConnection(port: port),
                    let session = try? connection.request("POST", "/sessions").header("X-Session-Id")
                else { return }
                for step in 0 ..< 2000 {
                    _ = try? connection.request(
                        "POST", "/groups/\(DurableFixtures.groups[(step + worker) % 5])/toggle",
                        headers: [("X-Session-Id", session)])
                    done.add(1, ordering: .relaxed)
                }
            }
            let seconds = Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000
            print(
                String(
                    format: "figures: fsync %@: 1 connection: toggle p50 %.0f µs, p99 %.0f µs, max %.0f µs; "
                        + "4 connections: %.0f toggles/s", policy.rawValue, percentile(latencies, 0.5),
                    percentile(latencies, 0.99), latencies.last!, Double(done.load(ordering: .relaxed)) / seconds))
        }
    }

    @Test("replay time for 100,000 sessions: from the journal alone, then from a snapshot")
    func replayTime() throws {
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let config = directory.file("menu.json")
        try DurableFixtures.menuJSON.write(toFile: config, atomically: true, encoding: .utf8)
        let data = directory.file("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        let sessions = 100_000
        do {
            let store = try DurableSessionStore(
                directory: data, menu: DurableFixtures.menu(), fsync: .no,
                compactionMinimumBytes: 1 << 40)
            for index in 0 ..< sessions {
                let id = try store.create()
                for group in 0 ..< 3 {
                    _ = try store.apply(.toggle(groupID: DurableFixtures.groups[(index + group) % 5]), to: id)
                }
            }
            store.close()
        }
        let journalBytes = DurableTemporaryDirectory.sizes(in: data).values.reduce(0, +)
        var server = try start(data, config, .everysec)
        print(
            "figures: journal only (\(journalBytes) bytes): \(server.stderrText.value.split(separator: "\n").last ?? "")"
        )
        _ = server.signalAndWait(SIGTERM, timeoutSeconds: 30)

        do {
            let store = try DurableSessionStore(directory: data, menu: DurableFixtures.menu(), fsync: .no)
            let started = ContinuousClock.now
            try store.compactNow()
            print("figures: compaction of \(sessions) sessions: \(ContinuousClock.now - started)")
            store.close()
        }
        let snapshotBytes = DurableTemporaryDirectory.sizes(in: data).values.reduce(0, +)
        server = try start(data, config, .everysec)
        print(
            "figures: snapshot (\(snapshotBytes) bytes): \(server.stderrText.value.split(separator: "\n").last ?? "")")
        _ = server.signalAndWait(SIGTERM, timeoutSeconds: 30)
    }
}
