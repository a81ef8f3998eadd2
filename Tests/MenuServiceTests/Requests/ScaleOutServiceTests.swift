// The service's side of running several instances on one shared session store (issue 16):
// `GET /readyz` answers the store's readiness, and a request carrying a session tag is never
// answered from a copy of the session older than that tag (read-your-writes across instances).
// Two services stand for two instances: each over its own `LaggingCopyStore`, a copy of the
// sessions of one shared in-memory store that is only brought up to date when asked to, as a
// caching store of a shared backend would be. The real store is proven live (ScaleOut*Tests).

import Foundation
import HTTPCore
import MenuModel
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuTestSupport
import Synchronization
import Testing

/// An instance's copy of the sessions of a shared store: a read answers the copy (fetched on
/// first use), a write goes to the shared store and updates the copy, and
/// ``snapshot(of:in:atLeast:)`` fetches a session whose copy is older, recording each revision
/// it was asked for. A conditional write is checked against the copy first, as a cache would.
/// `readiness` is what ``readinessProblem()`` answers; while `outage` holds a reason, every
/// call throws `.unavailable` with it (the backend unreachable).
final class LaggingCopyStore: SessionStore {
    let shared: InMemorySessionStore
    private let copies = Mutex<[SessionID: SessionSnapshot]>([:])
    private let asked = Mutex<[Int]>([])
    let readiness = Mutex<String?>(nil)
    let outage = Mutex<String?>(nil)

    init(sharing shared: InMemorySessionStore) { self.shared = shared }

    /// The revisions ``snapshot(of:in:atLeast:)`` was asked for, in order.
    var askedAtLeast: [Int] { asked.withLock { $0 } }

    var currentMenu: MenuGeneration { shared.currentMenu }

    /// Its sessions are copies another instance may have written past.
    var refreshesCopies: Bool { true }

    func create(in menu: MenuGeneration, state: SessionState) throws(SessionStoreError) -> SessionID {
        try checkOutage()
        return try shared.create(in: menu, state: state)
    }

    func delete(_ id: SessionID) throws(SessionStoreError) {
        try checkOutage()
        copies.withLock { _ = $0.removeValue(forKey: id) }
        try shared.delete(id)
    }

    func snapshot(of id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> SessionSnapshot {
        try checkOutage()
        if let copy = copies.withLock({ $0[id] }) { return copy }
        return try fetch(id, in: menu)
    }

    func snapshot(of id: SessionID, in menu: MenuGeneration, atLeast revision: Int) throws(SessionStoreError)
        -> SessionSnapshot
    {
        try checkOutage()
        asked.withLock { $0.append(revision) }
        if let copy = copies.withLock({ $0[id] }), copy.revision >= revision { return copy }
        return try fetch(id, in: menu)
    }

    func apply(
        _ command: SessionCommand, to id: SessionID?, in menu: MenuGeneration,
        if condition: RevisionCondition?
    ) throws(SessionStoreError) -> AppliedChange {
        try checkOutage()
        if let id, let condition, let copy = copies.withLock({ $0[id] }), !condition.admits(copy.revision) {
            throw .revisionMismatch(current: copy.revision)
        }
        let applied = try shared.apply(command, to: id, in: menu, if: condition)
        copies.withLock { $0[applied.sessionID] = SessionSnapshot(state: applied.state, revision: applied.revision) }
        return applied
    }

    /// The shared store's changes, cut back to the revision of the copy.
    func changes(of id: SessionID, since: Int, in menu: MenuGeneration) throws(SessionStoreError) -> SessionChanges {
        try checkOutage()
        let copied = try snapshot(of: id, in: menu).revision
        let changes = try shared.changes(of: id, since: min(since, copied), in: menu)
        guard since <= copied else { return SessionChanges(revision: copied, entries: nil) }
        return SessionChanges(revision: copied, entries: changes.entries?.filter { $0.revision <= copied })
    }

    func readinessProblem() -> String? { readiness.withLock { $0 } }

    func adopt(_ menu: MenuGeneration) -> SessionRebaseReport { shared.adopt(menu) }

    private func checkOutage() throws(SessionStoreError) {
        if let reason = outage.withLock({ $0 }) { throw .unavailable(reason: reason) }
    }

    private func fetch(_ id: SessionID, in menu: MenuGeneration) throws(SessionStoreError) -> SessionSnapshot {
        let fresh = try shared.snapshot(of: id, in: menu)
        copies.withLock { $0[id] = fresh }
        return fresh
    }
}

/// Two instances (services) over copies of one shared store, a session made through the first.
struct ScaleOutInstances {
    let first: MenuAPI
    let second: MenuAPI
    let secondStore: LaggingCopyStore
    let session: String
    /// The tag prefix of the menu served: `"<version>-`.
    let tagPrefix: String

    init() throws {
        let shared = InMemorySessionStore(menu: try sichuanMenu())
        first = MenuAPI(store: LaggingCopyStore(sharing: shared))
        secondStore = LaggingCopyStore(sharing: shared)
        second = MenuAPI(store: secondStore)
        session = first.call("POST", "/sessions").header("X-Session-Id") ?? ""
        tagPrefix = String(first.call("GET", "/count", session: session).header("ETag")?.dropFirst().dropLast(3) ?? "")
    }

    /// The second instance has read the session at revision 0 (its copy), then the first
    /// instance changed it to revision 1; returns that write's tag.
    func writeBehindTheSecondsBack() -> String {
        #expect(second.call("GET", "/count", session: session).json["revision"] as? Int == 0)
        let write = first.call("POST", "/groups/main-courses/toggle", session: session)
        #expect(write.status == 200 && write.json["revision"] as? Int == 1, "\(write.json)")
        #expect(
            second.call("GET", "/count", session: session).json["revision"] as? Int == 0, "the copy lags without a tag")
        return "\"\(tagPrefix)-1\""
    }
}

extension MenuAPI {
    /// ``call(_:_:query:session:body:)`` with extra headers.
    func call(
        _ method: String, _ path: String, query: [(String, String?)] = [], session: String, headers: [(String, String)],
        body: String? = nil
    ) -> HTTPResponse {
        respond(
            to: HTTPRequest(
                method: method, path: path, query: query.map { (name: $0.0, value: $0.1) },
                headers: [("x-session-id", session)] + headers.map { (name: $0.0, value: $0.1) },
                body: body.map { Array($0.utf8) } ?? []))
    }
}

@Suite struct ScaleOutServiceTests {
    @Test func readyzIsReadyWhileTheStoreCanServe() throws {
        let service = try makeService()
        for method in ["GET", "HEAD"] {
            let response = service.call(method, "/readyz")
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == "no-store")
            if method == "GET" { #expect(String(decoding: response.body, as: UTF8.self) == #"{"status":"ready"}"#) }
        }
    }

    @Test func readyzIsUnavailableWithTheStoresReasonWhileHealthzStaysOK() throws {
        let store = LaggingCopyStore(sharing: InMemorySessionStore(menu: try sichuanMenu()))
        let service = MenuAPI(store: store)
        store.readiness.withLock { $0 = "Redis at 127.0.0.1:6390 did not answer within 300 ms" }
        let response = service.call("GET", "/readyz")
        #expect(response.status == 503 && response.errorCode == "unavailable")
        #expect(response.header("Retry-After") == "1")
        #expect(
            ((response.json["error"] as? [String: Any])?["message"] as? String)?.contains(
                "did not answer within 300 ms") == true)
        #expect(service.call("GET", "/healthz").status == 200)
        store.readiness.withLock { $0 = nil }
        #expect(service.call("GET", "/readyz").status == 200)
    }

    @Test func aReadCarryingTheTagOfAWriteThroughAnotherInstanceIsNotAnsweredFromAnOlderCopy() throws {
        let instances = try ScaleOutInstances()
        let tag = instances.writeBehindTheSecondsBack()
        // The client holds revision 1: the second instance fetches it, and it is the current state.
        let revalidated = instances.second.call(
            "GET", "/rows", session: instances.session, headers: [("If-None-Match", tag)])
        #expect(revalidated.status == 304 && revalidated.header("ETag") == tag)
        #expect(instances.secondStore.askedAtLeast == [1])
        #expect(instances.second.call("GET", "/count", session: instances.session).json["revision"] as? Int == 1)
    }

    @Test(arguments: ["/rows", "/count", "/session", "/nodes/main-courses"])
    func everySessionReadAsksTheStoreForTheHighestRevisionTheTagsName(_ template: String) throws {
        let instances = try ScaleOutInstances()
        _ = instances.writeBehindTheSecondsBack()
        // Tags of another menu version, or with a locale, name revisions too: the highest counts.
        let tags = #""\#(instances.tagPrefix)-0", W/"other-menu-1", "\#(instances.tagPrefix)-zh-Hant-1""#
        let response = instances.second.call(
            "GET", template, session: instances.session, headers: [("If-None-Match", tags)])
        #expect([200, 304].contains(response.status))
        #expect(instances.secondStore.askedAtLeast == [1])
        if response.status == 200, let revision = response.json["revision"] as? Int { #expect(revision == 1) }
    }

    @Test(arguments: [#"*"#, #""no-digits-""#, #""v-007""#, #""v-12a""#, #""0123456789012345678901""#, #"not quoted"#])
    func aTagNamingNoRevisionLeavesTheReadAsItWas(_ header: String) throws {
        let instances = try ScaleOutInstances()
        let response = instances.second.call(
            "GET", "/count", session: instances.session, headers: [("If-None-Match", header)])
        #expect(instances.secondStore.askedAtLeast.isEmpty)
        #expect(response.status == (header == "*" ? 304 : header == "not quoted" ? 400 : 200))
    }

    @Test func aWriteWithTheTagOfAWriteThroughAnotherInstanceIsNotRefusedAsAConflict() throws {
        let instances = try ScaleOutInstances()
        let tag = instances.writeBehindTheSecondsBack()
        let write = instances.second.call(
            "PUT", "/groups/breakfast/expansion", session: instances.session,
            headers: [("If-Match", tag)], body: #"{"isExpanded":false}"#)
        #expect(write.status == 200 && write.json["revision"] as? Int == 2, "\(write.json)")
        #expect(instances.secondStore.askedAtLeast == [1])
    }

    @Test func aWriteWithAnOlderTagIsStillAConflict() throws {
        let instances = try ScaleOutInstances()
        _ = instances.writeBehindTheSecondsBack()
        _ = instances.second.call(
            "GET", "/count", session: instances.session, headers: [("If-None-Match", "\"\(instances.tagPrefix)-1\"")])
        let write = instances.second.call(
            "POST", "/groups/main-courses/toggle", session: instances.session,
            headers: [("If-Match", "\"\(instances.tagPrefix)-0\"")])
        #expect(write.status == 412 && write.json["revision"] as? Int == 1, "\(write.json)")
        #expect(
            instances.first.call("GET", "/count", session: instances.session).json["revision"] as? Int == 1,
            "nothing was written")
    }

    @Test func changesSinceARevisionWrittenThroughAnotherInstanceAreNotRefusedAsInTheFuture() throws {
        let instances = try ScaleOutInstances()
        _ = instances.writeBehindTheSecondsBack()
        let changes = instances.second.call("GET", "/changes", query: [("since", "1")], session: instances.session)
        #expect(changes.status == 200, "\(changes.json)")
        #expect(changes.json["revision"] as? Int == 1 && (changes.json["changes"] as? [Any])?.isEmpty == true)
        #expect(instances.secondStore.askedAtLeast == [1])
        // A since past every revision is still refused.
        let future = instances.second.call("GET", "/changes", query: [("since", "5")], session: instances.session)
        #expect(future.status == 400 && future.errorCode == "invalid_parameter")
    }

    @Test func everyRouteThatReachesTheStoreAnswers503UnavailableWithRetryAfterWhileItIsDown() throws {
        let instances = try ScaleOutInstances()
        instances.secondStore.outage.withLock { $0 = "Redis at 127.0.0.1:6390 did not answer within 300 ms" }
        let id = instances.session
        let requests: [(String, String, [(String, String?)], String?)] = [
            ("GET", "/rows", [], nil), ("HEAD", "/rows", [], nil), ("GET", "/count", [], nil),
            ("HEAD", "/count", [], nil),
            ("GET", "/search", [("q", "tofu")], nil), ("HEAD", "/search", [("q", "tofu")], nil),
            ("GET", "/changes", [("since", "0")], nil), ("HEAD", "/changes", [("since", "0")], nil),
            ("GET", "/session", [], nil), ("HEAD", "/session", [], nil), ("DELETE", "/session", [], nil),
            ("POST", "/sessions", [], nil), ("POST", "/groups/main-courses/toggle", [], nil),
            ("PUT", "/groups/main-courses/expansion", [], #"{"isExpanded":false}"#),
            ("PUT", "/expansion", [], #"{"all":"expanded"}"#),
            ("GET", "/nodes/mapo-tofu", [], nil), ("HEAD", "/nodes/mapo-tofu", [], nil),
            ("POST", "/nodes/mapo-tofu/reveal", [], nil),
            ("PUT", "/nodes/mapo-tofu/selection", [], #"{"selected":true}"#),
            ("PUT", "/selection", [], #"{"all":true}"#),
            ("GET", "/selection", [], nil), ("HEAD", "/selection", [], nil)
        ]
        var templates: Set<String> = []
        for (method, path, query, body) in requests {
            var route = -1
            let response = instances.second.respond(
                to: HTTPRequest(
                    method: method, path: path, query: query.map { (name: $0.0, value: $0.1) },
                    headers: [("x-session-id", id)], body: body.map { Array($0.utf8) } ?? []), route: &route)
            #expect(
                response.status == 503 && response.header("Retry-After") == "1", "\(method) \(path): \(response.status)"
            )
            if method != "HEAD" {
                #expect(response.errorCode == "unavailable", "\(method) \(path)")
                #expect(
                    ((response.json["error"] as? [String: Any])?["message"] as? String)?.contains("did not answer")
                        == true)
            }
            templates.insert("\(method) \(Endpoint.routes[route].template)")
        }
        // Every route but the liveness probe, the metrics, the page, the menu's summary (none reaches the
        // store) and the readiness (its own test) was asked.
        let unasked = Set(Endpoint.methodRoutes.map { "\($0.method) \($0.route.template)" }).subtracting(templates)
        #expect(
            unasked == [
                "GET /healthz", "HEAD /healthz", "GET /readyz", "HEAD /readyz", "GET /metrics", "HEAD /metrics",
                "GET /", "HEAD /", "GET /app.js", "HEAD /app.js", "GET /app.css", "HEAD /app.css", "GET /menu",
                "HEAD /menu"
            ])
        #expect(instances.second.call("GET", "/healthz").status == 200)
        #expect(instances.second.call("GET", "/rows").status == 200, "the default view needs no store")
    }
}
