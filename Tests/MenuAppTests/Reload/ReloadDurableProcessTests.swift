// Reload with `--data-dir`, on the built `menu-server` executable: a session carried over by a
// SIGHUP reload is what a restart brings back, and a restart with a later config carries it over
// by the same rule as a live reload would have.

import Foundation
import HTTPTestSupport
import MenuAppTestSupport
import MenuModel
import MenuTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension AppTests {
    @Suite("Live: reloading the menu-server executable with durable sessions")
    struct ReloadDurableProcessTests {
        @Test
        func aSessionCarriedOverByAReloadIsWhatARestartWithALaterConfigCarriesOver() throws {
            let fixture = try ReloadFixture()
            let data = fixture.directory.appendingPathComponent("data")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: false)
            let arguments = fixture.arguments(["--data-dir", data.path, "--fsync", "always"])
            try fixture.replace(with: reloadMenu(ReloadProcessTests.first))
            let firstVersion = try fixture.menu().version

            let session: String
            do {
                let child = try LiveChildServer(arguments: arguments)
                defer { child.stop() }
                session = try child.newSession()
                for (group, isExpanded) in [
                    ("mains", true), ("drinks", true), ("desserts", true), ("sides", true), ("specials", false)
                ] {
                    #expect(try child.setExpansion(group, isExpanded, session: session).status == 200)
                }
                try fixture.replace(with: reloadMenu(ReloadProcessTests.second))
                let second = try fixture.menu().version
                child.hangUp(awaiting: "menu-server: SIGHUP: menu reloaded: version \(firstVersion) -> \(second), ")
                #expect(
                    try child.groupStates(session: session)
                        == ["starters": false, "mains": true, "sides": true, "specials": false, "wine": true])
                child.expectCleanStop()
            }

            // Restarted on the third config: sides and specials follow their defaults back (after the
            // reload they equalled them, so they were no longer changed), desserts' choice stays
            // dropped, mains stays changed: what the live reload to the third config shows.
            try fixture.replace(with: reloadMenu(ReloadProcessTests.third))
            let child = try LiveChildServer(arguments: arguments)
            defer { child.stop() }
            #expect(try child.count(session: session).version == (try fixture.menu().version))
            #expect(
                try child.groupStates(session: session)
                    == [
                        "starters": false, "mains": true, "desserts": false, "sides": false, "specials": true,
                        "wine": true
                    ])
            child.expectCleanStop()
        }

        /// The reload entry's revision, answered before a SIGKILL, is what the restarted server
        /// answers (from the snapshot written after the reload's pass and the journal's reload
        /// count), and the next write is the revision after it, never one a client saw.
        @Test
        func aReloadsRevisionAnsweredBeforeASIGKILLIsWhatTheRestartedServerAnswers() throws {
            let fixture = try ReloadFixture()
            let data = fixture.directory.appendingPathComponent("data")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: false)
            let arguments = fixture.arguments(["--data-dir", data.path, "--fsync", "always"])
            try fixture.replace(with: reloadMenu(ReloadProcessTests.first))
            let session: String
            let carried: Int
            do {
                let child = try LiveChildServer(arguments: arguments)
                defer { child.stop() }
                session = try child.newSession()
                #expect(try child.setExpansion("mains", true, session: session).status == 200)
                let before = try child.count(session: session).revision
                try fixture.replace(with: reloadMenu(ReloadProcessTests.second))
                child.hangUp(awaiting: "menu reloaded")
                carried = try child.count(session: session).revision
                #expect(carried == before + 1)
                let feed = try child.request("GET", "/changes?since=\(before)", session: session)
                #expect(feed.status == 200 && feed.text.contains(#""reload":{"#), "\(feed)")
                #expect(child.signalAndWait(SIGKILL))
            }
            let child = try LiveChildServer(arguments: arguments)
            defer { child.stop() }
            #expect(try child.count(session: session).revision == carried)
            let write = try child.setExpansion("mains", false, session: session)
            #expect(write.status == 200)
            #expect(try child.count(session: session).revision == carried + 1)
            child.expectCleanStop()
        }
    }
}
