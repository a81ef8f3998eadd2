// Several menu-server processes on one real Redis behind a real nginx (issue 16): any instance
// answers any session, concurrent writes through nginx lose nothing, and a client never reads
// (or is refused a write) at a revision older than its own last write, whichever instance answers.
// Every client has a fixed amount of work; nothing is timed.

import Dispatch
import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuTestSupport
import NginxTestSupport
import RedisTestSupport
import Testing

extension AppTests {
    @Suite(
        "Scale-out: instances sharing one Redis behind nginx", .serialized,
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: NginxProcess.executable)
                && FileManager.default.isExecutableFile(atPath: RedisServerProcess.executable)))
    struct ScaleOutConsistencyTests {
        @Test
        func aSessionMadeThroughNginxIsReadAndChangedThroughEveryInstance() throws {
            let cluster = try ScaleOutCluster(instances: 3)
            defer { cluster.stop() }
            let nginx = try cluster.throughNginx()
            let session = try nginx.newSession()
            var expected = try nginx.state(of: session)
            #expect(expected.revision == 0)
            for (index, group) in ["main-courses", "breakfast", "drinks"].enumerated() {
                // A write on one instance, asked directly ...
                let write = try cluster.direct(index).send("POST", "/groups/\(group)/toggle", session: session)
                #expect(write.status == 200, "\(write)")
                expected.revision += 1
                expected.groups[group]?.toggle()
                if group == "drinks" {
                    expected.groups = expected.groups.filter { !["beer", "baijiu", "soft-drinks"].contains($0.key) }
                }
                // ... is what every instance answers, directly and through nginx.
                for other in cluster.instances.indices {
                    #expect(
                        try cluster.direct(other).state(of: session) == expected,
                        "instance \(other) after the write on \(index)")
                }
                for _ in cluster.instances { #expect(try nginx.state(of: session) == expected) }
            }
            // Without a tag too, once Redis's invalidations have reached every instance's cache.
            for index in cluster.instances.indices {
                #expect(
                    eventually { (try? cluster.direct(index).state(of: session, fresh: false)) == expected },
                    "instance \(index) converges")
            }
            // Its tag answers 304 everywhere.
            let tag = scaleOutTag(version: expected.version, revision: expected.revision)
            for index in cluster.instances.indices {
                let revalidated = try cluster.direct(index).send(
                    "GET", "/count", session: session, headers: [("If-None-Match", tag)])
                #expect(revalidated.status == 304 && revalidated.header("ETag") == tag, "\(revalidated)")
            }
            let served = Set(cluster.nginx.accessLog().compactMap { $0.split(separator: " ").last.map(String.init) })
            #expect(
                served == Set(cluster.instances.map { "127.0.0.1:\($0.port)" }), "nginx sent requests to every instance"
            )
        }

        /// One acknowledged write: what it asked for and what its 200 said.
        struct Acknowledged: Sendable {
            var session: String
            var group: String
            /// nil for a toggle, else the state a PUT set.
            var setTo: Bool?
            var revision: Int
            var isExpanded: Bool
        }

        @Test
        func concurrentTogglesAndPutsThroughNginxLoseNothing() throws {
            let cluster = try ScaleOutCluster(instances: 3, redisTimeout: 5_000)
            defer { cluster.stop() }
            let sessions = try (0 ..< 2).map { _ in try cluster.throughNginx().newSession() }
            let threads = 4
            let writesPerThread = 40
            let acknowledged = LiveLocked<[Acknowledged]>([])
            let failures = LiveLocked<[String]>([])
            let port = cluster.nginx.port
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                var random = ScaleOutRandom(seed: UInt64(thread) * 7919 + 17)
                do {
                    let connection = try LiveRawConnection(port: port)
                    for _ in 0 ..< writesPerThread {
                        let session = sessions[random.next(below: sessions.count)]
                        let group = scaleOutGroups[random.next(below: scaleOutGroups.count)]
                        let setTo: Bool? = random.next(below: 2) == 0 ? nil : random.next(below: 2) == 0
                        let response =
                            try setTo.map {
                                try connection.send(
                                    "PUT", "/groups/\(group)/expansion", session: session,
                                    body: #"{"isExpanded":\#($0)}"#)
                            } ?? connection.send("POST", "/groups/\(group)/toggle", session: session)
                        guard response.status == 200 else {
                            failures.update {
                                $0.append("\(setTo.map { "PUT \($0)" } ?? "toggle") \(group): \(response)")
                            }
                            continue
                        }
                        let change = try response.decode(LiveChange.self)
                        acknowledged.update {
                            $0.append(
                                Acknowledged(
                                    session: session, group: group, setTo: setTo, revision: change.revision,
                                    isExpanded: change.isExpanded))
                        }
                    }
                } catch {
                    failures.update { $0.append("thread \(thread): \(error)") }
                }
            }
            #expect(failures.value.isEmpty, "\(failures.value.prefix(5))")
            #expect(acknowledged.value.count == threads * writesPerThread - failures.value.count)
            let direct = try cluster.direct(1)
            for session in sessions {
                let replayed = try Self.replay(
                    acknowledged.value.filter { $0.session == session }, from: try direct.state(of: session).version)
                let final = try direct.state(of: session)
                #expect(final.revision == replayed.revision, "every acknowledged change, once")
                for (group, isExpanded) in final.groups {
                    #expect(replayed.groups[group] == isExpanded, "\(group) of \(session)")
                }
            }
            // The writes went through the write pipeline (the default), not all handed back to
            // blocking writes. (Blocking writes are what each pipelined write falls back to; the
            // store's tests run both, and --redis-pipeline off is that path alone.)
            var pipelined = 0
            for index in cluster.instances.indices {
                let page = String(decoding: try cluster.direct(index).send("GET", "/metrics").body, as: UTF8.self)
                let line = page.split(separator: "\n").first { $0.hasPrefix("menu_redis_pipeline_writes_total ") }
                pipelined += line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
            }
            #expect(pipelined > 0)
        }

        /// The state the acknowledged writes of one session make when replayed in revision order,
        /// checking that each answer states the replayed state of its group. Each revision from 1 up
        /// was made by exactly one write (a toggle, or a PUT that changed its group); the other PUTs
        /// at a revision changed nothing and must agree with it.
        static func replay(_ writes: [Acknowledged], from version: String) throws -> (
            revision: Int, groups: [String: Bool]
        ) {
            var groups = Dictionary(uniqueKeysWithValues: scaleOutGroups.map { ($0, true) })  // every group of the menu is expanded by default
            let byRevision = Dictionary(grouping: writes, by: \.revision)
            let top = byRevision.keys.max() ?? 0
            for revision in 0 ... top {
                let here = byRevision[revision] ?? []
                if revision > 0 {
                    let maker = here.first { $0.setTo == nil } ?? here.first { $0.setTo != groups[$0.group] }
                    guard let maker else {
                        Issue.record(
                            "no acknowledged write made revision \(revision) (of \(top)): \(here.map { "\($0.group) \($0.setTo.map(String.init) ?? "toggle")" })"
                        )
                        continue
                    }
                    #expect(here.count { $0.setTo == nil } <= 1, "two toggles answered revision \(revision)")
                    groups[maker.group] = maker.setTo ?? !(groups[maker.group] ?? true)
                }
                for write in here {
                    #expect(
                        write.isExpanded == groups[write.group],
                        "revision \(revision): \(write.group) answered \(write.isExpanded)")
                    if let setTo = write.setTo {
                        #expect(
                            setTo == groups[write.group], "a PUT at revision \(revision) left \(write.group) otherwise")
                    }
                }
            }
            return (top, groups)
        }

        @Test(arguments: ["on", "off"])
        func aReadOrWriteOnAnotherInstanceRightAfterAWriteIsNeverAnsweredFromBeforeIt(cache: String) throws {
            let cluster = try ScaleOutCluster(instances: 2, redisTimeout: 5_000, flags: ["--redis-cache", cache])
            defer { cluster.stop() }
            let connections = try [cluster.direct(0), cluster.direct(1)]
            let session = try connections[0].newSession()
            var reads = 0
            var revision = 0
            /// Toggles `group` through `writer` (with `If-Match` when given) and returns the answer's tag.
            func write(_ writer: LiveRawConnection, _ group: String, ifMatch: String? = nil) throws -> (
                tag: String, isExpanded: Bool
            ) {
                let response = try writer.send(
                    "POST", "/groups/\(group)/toggle", session: session,
                    headers: ifMatch.map { [("If-Match", $0)] } ?? [])
                #expect(response.status == 200, "revision \(revision): \(response)")
                let change = try response.decode(LiveChange.self)
                revision += 1
                #expect(change.revision == revision)
                return (scaleOutTag(version: change.version, revision: change.revision), change.isExpanded)
            }
            /// Reads through `reader` at once with `tag`: the write's state, never an older one.
            func read(_ reader: LiveRawConnection, _ tag: String, group: String, isExpanded: Bool) throws {
                let target = ["/count", "/rows?limit=5", "/session", "/nodes/\(group)"][reads % 4]
                reads += 1
                let response = try reader.send("GET", target, session: session, headers: [("If-None-Match", tag)])
                if target.hasPrefix("/nodes/") {
                    // No tag on /nodes: the row of the group just written says which state it read.
                    let row = try response.json()["row"]
                    #expect(
                        response.status == 200 && row?["isExpanded"]?.boolValue == isExpanded, "\(target): \(response)")
                } else {
                    #expect(
                        response.status == 304 && response.header("ETag") == tag,
                        "\(target) at revision \(revision): \(response)")
                }
            }
            for round in 0 ..< 120 {
                // The reader last saw the session two writes ago (its copy, with --redis-cache on, is behind).
                let (first, second) = (connections[round % 2], connections[1 - round % 2])
                let group = scaleOutGroups[round % 3]
                let one = try write(first, group)
                try read(second, one.tag, group: group, isExpanded: one.isExpanded)
                let two = try write(first, group)
                // A conditional write with the newest tag is accepted on the instance that did not make it ...
                let three = try write(second, group, ifMatch: two.tag)
                // ... and read back at once on the one that is now behind.
                try read(first, three.tag, group: group, isExpanded: three.isExpanded)
            }
            #expect(reads == 240 && revision == 360)
        }
    }
}
