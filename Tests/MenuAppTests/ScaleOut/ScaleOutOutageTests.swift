// Several menu-server processes on one real Redis behind nginx when Redis misbehaves or the menu
// changes (issue 16): a stopped Redis gives 503 `unavailable` (never a hang) and readiness 503
// while liveness stays 200, and the service comes back by itself; a killed Redis restarted from
// its append-only file has every session; a flushed script cache is loaded again; a menu reload
// on one instance leaves sessions working on all. Waits are bounded; nothing is timed.

import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuTestSupport
import NginxTestSupport
import RedisClient
import RedisTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension AppTests {
    @Suite(
        "Scale-out: Redis outages and reloads behind nginx", .serialized,
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: NginxProcess.executable)
                && FileManager.default.isExecutableFile(atPath: RedisServerProcess.executable)))
    struct ScaleOutOutageTests {
        /// Every connection a test uses: each instance directly, then nginx.
        private func connections(_ cluster: ScaleOutCluster) throws -> [(name: String, connection: LiveRawConnection)] {
            try cluster.instances.indices.map { ("instance \($0)", try cluster.direct($0)) } + [
                ("nginx", try cluster.throughNginx())
            ]
        }

        /// Whether `response` is the store's 503: `unavailable` with `Retry-After: 1`.
        private func isUnavailable(_ response: LiveResponse) -> Bool {
            response.status == 503 && response.header("Retry-After") == "1"
                && response.text.contains(#""code":"unavailable""#)
        }

        /// Toggles through nginx until one is answered 200 (within the `eventually` bound): each refusal
        /// a 503 that changed nothing, the accepted one the next revision after `revision`.
        private func expectAWriteIsAcceptedAgain(
            _ cluster: ScaleOutCluster, session: String, from revision: Int,
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            let nginx = try cluster.throughNginx()
            var refusals: [String] = []
            var accepted: LiveResponse?
            _ = eventually(every: .milliseconds(20)) {
                guard let response = try? nginx.send("POST", "/groups/main-courses/toggle", session: session) else {
                    return false
                }
                if response.status == 200 { accepted = response } else { refusals.append("\(response.status)") }
                return accepted != nil
            }
            #expect(refusals.allSatisfy { $0 == "503" }, "\(refusals)", sourceLocation: sourceLocation)
            let write = try #require(
                accepted, "no write accepted after \(refusals.count) refusals", sourceLocation: sourceLocation)
            #expect(
                (try? write.decode(LiveRevision.self))?.revision == revision + 1, "\(write)",
                sourceLocation: sourceLocation)
        }

        @Test
        func whileRedisIsStoppedRequestsAnswer503AndReadinessFailsThenTheServiceComesBackByItself() throws {
            let cluster = try ScaleOutCluster(instances: 2)
            defer { cluster.stop() }
            let session = try cluster.throughNginx().newSession()
            #expect(try cluster.throughNginx().send("POST", "/groups/breakfast/toggle", session: session).status == 200)
            let before = try cluster.direct(0).state(of: session)
            cluster.redis.pause()
            for (name, connection) in try connections(cluster) {
                // Each answer comes (the connection's 15 s receive timeout bounds the wait) and is a 503.
                let write = try connection.send("POST", "/groups/main-courses/toggle", session: session)
                #expect(isUnavailable(write), "\(name): \(write)")
                #expect(
                    eventually {
                        isUnavailable(
                            (try? connection.send("GET", "/count", session: session))
                                ?? LiveResponse(status: 0, headers: [], body: []))
                    },
                    "\(name): a read while Redis is stopped")
                #expect(
                    eventually {
                        isUnavailable(
                            (try? connection.send("GET", "/readyz")) ?? LiveResponse(status: 0, headers: [], body: []))
                    },
                    "\(name): /readyz while Redis is stopped")
                let health = try connection.send("GET", "/healthz")
                #expect(
                    health.status == 200 && health.text == #"{"status":"ok"}"#, "\(name): liveness is not the store's")
            }
            // The refusals are counted as store errors (the store is measured as the others are).
            let metrics = try cluster.direct(0).send("GET", "/metrics").text
            let errors = metrics.split(separator: "\n").first { $0.hasPrefix("menu_store_errors_total ") }?.split(
                separator: " "
            ).last
            #expect(
                (errors.flatMap { Double($0) } ?? 0) >= 1, "\(errors.map(String.init) ?? "no menu_store_errors_total")")
            cluster.redis.resume()
            // A refused toggle whose command reached the stopped Redis's socket runs when it resumes
            // (its 503 says it may): the session holds some of the three toggles, each whole, and no other change.
            var after: ScaleOutState?
            for (name, connection) in try connections(cluster) {
                #expect(eventually { (try? connection.send("GET", "/readyz"))?.status == 200 }, "\(name) ready again")
                let state = try #require(try connection.states(of: [session]).first)
                #expect(
                    after == nil || state == after, "\(name): \(state), \(after.map(String.init(describing:)) ?? "")")
                after = after ?? state
            }
            let landed = (after?.revision ?? -1) - before.revision
            var expected = before
            expected.revision += landed
            if landed % 2 == 1 { expected.groups["main-courses"]?.toggle() }
            #expect(
                (0 ... 3).contains(landed) && after == expected,
                "\(after.map(String.init(describing:)) ?? "") after \(before)")
            // Each HTTP thread of an instance has its own Redis connection, backing off on its own: a
            // write may still be refused (503, nothing sent to Redis) before one is accepted.
            try expectAWriteIsAcceptedAgain(cluster, session: session, from: expected.revision)
        }

        @Test
        func aKilledRedisRestartedFromItsAppendOnlyFileHasEverySession() throws {
            let cluster = try ScaleOutCluster(instances: 2, appendOnly: true)
            defer { cluster.stop() }
            let nginx = try cluster.throughNginx()
            let sessions = try (0 ..< 3).map { _ in try nginx.newSession() }
            for (index, session) in sessions.enumerated() {
                for group in scaleOutGroups.prefix(index + 1) {
                    #expect(
                        try nginx.send(
                            "PUT", "/groups/\(group)/expansion", session: session, body: #"{"isExpanded":false}"#
                        ).status == 200)
                }
            }
            let before = try sessions.map { try cluster.direct(0).state(of: $0) }
            cluster.redis.kill()
            #expect(isUnavailable(try cluster.direct(1).send("POST", "/groups/breakfast/toggle", session: sessions[0])))
            try cluster.redis.restart()
            for (name, connection) in try connections(cluster) {
                #expect(try connection.states(of: sessions) == before, "\(name) after the restart")
            }
            try expectAWriteIsAcceptedAgain(cluster, session: sessions[2], from: before[2].revision)
        }

        @Test
        func writesStillWorkAfterRedisForgetsItsScripts() throws {
            let cluster = try ScaleOutCluster(instances: 2)
            defer { cluster.stop() }
            let session = try cluster.throughNginx().newSession()
            var revision = 0
            for round in 0 ..< 2 {
                for index in cluster.instances.indices {
                    let toggle = try cluster.direct(index).send(
                        "POST", "/groups/\(scaleOutGroups[index])/toggle", session: session)
                    #expect(
                        toggle.status == 200 && (try? toggle.decode(LiveRevision.self))?.revision == revision + 1,
                        "round \(round), instance \(index): \(toggle)")
                    let set = try cluster.direct(index).send(
                        "PUT", "/expansion", session: session,
                        body: #"{"all":"\#(round == 0 ? "collapsed" : "expanded")"}"#)
                    #expect(set.status == 200, "round \(round), instance \(index): \(set)")
                    revision = (try? set.decode(LiveRevision.self))?.revision ?? -1
                }
                // SCRIPT FLUSH: every instance's next EVALSHA finds NOSCRIPT and loads the script again.
                #expect(cluster.redis.command("SCRIPT", "FLUSH") == .status("OK"))
            }
            for index in cluster.instances.indices {
                #expect(try cluster.direct(index).state(of: session).revision == revision)
            }
        }

        /// The tests' menu with a new top-level group `desserts` (expanded, one row) and without the `baijiu` group.
        private func changedMenu() throws -> String {
            let data = try Data(contentsOf: URL(fileURLWithPath: LivePaths.menuConfig))
            var menu = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            var items = try #require(menu["items"] as? [[String: Any]])
            items.append([
                "id": "desserts", "title": "甜點", "expanded": true, "items": [["id": "tangyuan", "title": "湯圓"]]
            ])
            if let drinks = items.firstIndex(where: { $0["id"] as? String == "drinks" }),
                var children = items[drinks]["items"] as? [[String: Any]]
            {
                children.removeAll { $0["id"] as? String == "baijiu" }
                items[drinks]["items"] = children
            }
            menu["items"] = items
            return String(
                decoding: try JSONSerialization.data(withJSONObject: menu, options: [.sortedKeys]), as: UTF8.self)
        }

        @Test
        func aMenuReloadOnOneInstanceLeavesSessionsWorkingOnAll() throws {
            let cluster = try ScaleOutCluster(instances: 2)
            defer { cluster.stop() }
            let nginx = try cluster.throughNginx()
            let session = try nginx.newSession()
            #expect(try nginx.send("POST", "/groups/breakfast/toggle", session: session).status == 200)
            let old = try cluster.direct(1).state(of: session)
            let changed = try changedMenu()
            try cluster.fixture.replace(with: changed, at: cluster.configs[0])
            cluster.instances[0].hangUp(awaiting: "menu reloaded")
            // The first instance serves the new menu, the second the old one: a session written on
            // either reads on both. The first carries it over in Redis: one revision, a reload entry.
            let reloaded = try cluster.direct(0).state(of: session)
            #expect(
                reloaded.version != old.version && reloaded.revision == old.revision + 1, "\(reloaded) after \(old)")
            let entry = try cluster.direct(0).send("GET", "/changes?since=\(old.revision)", session: session)
            #expect(entry.status == 200 && entry.text.contains(#""reload":{"#), "\(entry)")
            let gone = try cluster.direct(1).send("GET", "/changes?since=\(old.revision)", session: session)
            #expect(gone.status == 410, "the old menu's instance cannot replay the new rows: \(gone)")
            #expect(
                reloaded.groups["breakfast"] == false && reloaded.groups["desserts"] == true
                    && reloaded.groups["baijiu"] == nil, "\(reloaded)")
            #expect(try cluster.direct(0).send("POST", "/groups/main-courses/toggle", session: session).status == 200)
            var onOld = try cluster.direct(1).state(of: session)
            #expect(
                onOld.version == old.version && onOld.revision == old.revision + 2
                    && onOld.groups["main-courses"] == false, "\(onOld)")
            #expect(
                try cluster.direct(1).send(
                    "PUT", "/groups/beer/expansion", session: session, body: #"{"isExpanded":false}"#
                ).status == 200)
            onOld = try cluster.direct(1).state(of: session)
            // A write on the old menu's instance: the new one carries the session over again.
            let onNew = try cluster.direct(0).state(of: session)
            #expect(
                onNew.revision == old.revision + 4 && onNew.groups["beer"] == false
                    && onNew.groups["breakfast"] == false, "\(onNew)")
            for group in Set(onNew.groups.keys).intersection(onOld.groups.keys) {
                #expect(onNew.groups[group] == onOld.groups[group], "\(group)")
            }
            for _ in 0 ..< 4 { #expect(try nginx.send("GET", "/count", session: session).status == 200) }
            // The second instance reloads too: both serve one menu and one state.
            try cluster.fixture.replace(with: changed, at: cluster.configs[1])
            cluster.instances[1].hangUp(awaiting: "menu reloaded")
            let reloadedToo = try cluster.direct(1).state(of: session)
            #expect(reloadedToo == onNew, "\(reloadedToo) on the second, \(onNew) on the first")
        }
    }
}
