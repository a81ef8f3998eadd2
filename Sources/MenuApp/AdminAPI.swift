import AdminAccess
import Foundation
import HTTPCore
import HTTPServer
import MenuAvailability
import MenuModel
import MenuService
import MenuSessions
import Metrics
import Synchronization

extension ServerSettings {
    /// The admin API takes both its listener and its tokens: there is no default token, and it is
    /// never served on the public port (where the CORS policy and the page are).
    func checkAdmin() throws(SettingsError) {
        if adminListen != nil, adminTokenFile == nil {
            throw .requires(
                "--admin-listen", "--admin-token-file", reason: "the admin API has no default token")
        }
        if adminTokenFile != nil, adminListen == nil {
            throw .requires(
                "--admin-token-file", "--admin-listen",
                reason: "the admin API is served only on a listener of its own (127.0.0.1:9091, say)")
        }
    }
}

/// The admin API (`/admin/…`), on a listener of its own (`--admin-listen`): every request needs
/// `Authorization: Bearer <token>` with a token of `--admin-token-file`. Routes: `POST
/// /admin/reload` (the menu, as SIGHUP does, answering what happened); `PUT /admin/availability`
/// (a batch of availability changes, all or none: ``AvailabilityBatchParser``,
/// ``MenuAPI/updateAvailability(_:now:)``) and `GET /admin/availability` (what is not available).
///
/// A missing token is `401` with `WWW-Authenticate: Bearer realm="menu-server admin"`; a wrong one
/// `401` with `error="invalid_token"`, a malformed field `400` with `error="invalid_request"`.
/// Both count as failed attempts of the client's address: past ``failedAttemptsPerMinute`` a
/// minute the address gets `429` with `Retry-After`, before any token is looked at. Every
/// request that passed is logged with the token's fingerprint (never the token) and what it did.
///
/// Cost: per request a `stat` of the token file, a SHA-256 of the candidate, one short lock.
package final class AdminAPI: Sendable {
    /// Failed authentications one address may make a minute (a bucket that deep, refilled as fast).
    package static let failedAttemptsPerMinute = 10
    package static let realm = "menu-server admin"

    private let tokens: AdminTokens
    private let failures: SessionRateLimiter
    private let reloadMenu: @Sendable () -> Result<MenuReload, ReloadError>
    let log: @Sendable (String) -> Void
    let outcomes = AdminOutcomes()
    /// The service whose availability the admin API sets; nil: no availability routes.
    private let service: MenuAPI?

    package init(
        tokens: AdminTokens,
        failures: SessionRateLimiter = SessionRateLimiter(perMinute: AdminAPI.failedAttemptsPerMinute),
        log: @escaping @Sendable (String) -> Void, service: MenuAPI? = nil,
        reloadMenu: @escaping @Sendable () -> Result<MenuReload, ReloadError>
    ) {
        self.tokens = tokens
        self.failures = failures
        self.log = log
        self.service = service
        self.reloadMenu = reloadMenu
    }

    /// What the admin API answers to, for a 404's and a 405's message.
    private static let routes = "POST /admin/reload, GET or PUT /admin/availability"

    package func respond(to request: HTTPRequest) -> HTTPResponse {
        let from = request.peerAddress.map { "\($0)" } ?? "an unknown address"
        if let address = request.peerAddress, let wait = failures.admit(address, taking: false) {
            outcomes.limited.add(1, ordering: .relaxed)
            return Self.error(
                429, "too_many_failures",
                "\(Self.failedAttemptsPerMinute) failed authentications a minute from one address at most; retry in \(wait) s",
                headers: [("Retry-After", "\(wait)")])
        }
        if let problem = tokens.refresh() { log("admin: \(problem); the tokens read before stay in use") }
        let token: AdminTokens.Token
        switch BearerCredentials(authorization: request.header("Authorization")) {
        case .missing:
            outcomes.unauthorized.add(1, ordering: .relaxed)
            return Self.error(
                401, "unauthorized", "the admin API needs Authorization: Bearer <a token of --admin-token-file>",
                headers: [("WWW-Authenticate", "Bearer realm=\"\(Self.realm)\"")])
        case .malformed(let reason):
            failed(request, from: from, because: reason)
            return Self.error(
                400, "invalid_request", reason,
                headers: [("WWW-Authenticate", "Bearer realm=\"\(Self.realm)\", error=\"invalid_request\"")])
        case .token(let candidate):
            guard let matched = tokens.match(candidate) else {
                failed(request, from: from, because: "a token not in \(tokens.path)")
                return Self.error(
                    401, "invalid_token", "the token is not one of the admin API's",
                    headers: [("WWW-Authenticate", "Bearer realm=\"\(Self.realm)\", error=\"invalid_token\"")])
            }
            token = matched
        }
        let who = "admin: token \(token.fingerprint) from \(from)"
        if request.path(is: "/admin/availability"), let service {
            return availability(request, service, who: who)
        }
        guard request.path(is: "/admin/reload") else {
            outcomes.notFound.add(1, ordering: .relaxed)
            return Self.error(404, "not_found", "admin routes: \(Self.routes)")
        }
        guard request.method == "POST" else {
            outcomes.notFound.add(1, ordering: .relaxed)
            return Self.error(
                405, "method_not_allowed", "\(request.method) is not allowed here: POST /admin/reload",
                headers: [("Allow", "POST")])
        }
        switch reloadMenu() {
        case .success(let reload):
            outcomes.succeeded.add(1, ordering: .relaxed)
            log("\(who): POST /admin/reload: \(reload.summary)")
            var body: [String: Any] = [
                "reloaded": reload.changed, "version": reload.to, "nodes": reload.nodeCount, "summary": reload.summary
            ]
            if reload.changed {
                body["previousVersion"] = reload.from
                body["sessionsCarriedOver"] = reload.sessions.rebased
            }
            return Self.json(200, body)
        case .failure(let error):
            outcomes.refused.add(1, ordering: .relaxed)
            log("\(who): POST /admin/reload refused: \(error.description)")
            return Self.error(422, "invalid_config", error.description)
        }
    }

    /// A failed authentication: counted against the address, logged (without the token).
    private func failed(_ request: HTTPRequest, from: String, because reason: String) {
        outcomes.unauthorized.add(1, ordering: .relaxed)
        if let address = request.peerAddress { _ = failures.admit(address) }
        log("admin: refused \(request.method) \(request.path) from \(from): \(reason)")
    }

    /// `menu_admin_requests_total{outcome}`.
    package func writeMetrics(to out: inout PrometheusText) {
        out.family(
            "menu_admin_requests_total", .counter,
            help:
                "Admin API requests by outcome: succeeded, refused (an invalid config), unauthorized (no, a wrong or a malformed token), limited (429 after failed attempts), not_found."
        )
        out.sample("menu_admin_requests_total", [("outcome", "succeeded")], outcomes.succeeded.load(ordering: .relaxed))
        out.sample("menu_admin_requests_total", [("outcome", "refused")], outcomes.refused.load(ordering: .relaxed))
        out.sample(
            "menu_admin_requests_total", [("outcome", "unauthorized")], outcomes.unauthorized.load(ordering: .relaxed))
        out.sample("menu_admin_requests_total", [("outcome", "limited")], outcomes.limited.load(ordering: .relaxed))
        out.sample("menu_admin_requests_total", [("outcome", "not_found")], outcomes.notFound.load(ordering: .relaxed))
        guard let service else { return }
        out.family(
            "menu_availability_changes_total", .counter,
            help: "Node ids whose availability an admin batch changed (PUT /admin/availability).")
        out.sample("menu_availability_changes_total", [], outcomes.availabilityChanges.load(ordering: .relaxed))
        let availability = service.current.availability
        out.family(
            "menu_availability_entries", .gauge,
            help: "Nodes with an availability entry (sold_out or paused), until it ends or is cleared.")
        out.sample("menu_availability_entries", [], availability.overlay.entries.count)
        out.family(
            "menu_availability_revision", .gauge,
            help: "The availability overlay's revision: one more for each batch, expiry or reload that changed it.")
        out.sample("menu_availability_revision", [], availability.overlay.revision)
        let served = service.current
        out.family(
            "menu_availability_hidden_nodes", .gauge,
            help:
                "Nodes out of the rows now because they are unavailable and their whenUnavailable is hide, each subtree counted whole."
        )
        out.sample("menu_availability_hidden_nodes", [], served.published.nodeCount - served.generation.menu.nodeCount)
    }

    static func json(_ status: Int, _ object: [String: Any], headers: [(String, String)] = []) -> HTTPResponse {
        let body =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return HTTPResponse(
            status: status,
            headers: [(name: "Content-Type", value: "application/json; charset=utf-8"), ("Cache-Control", "no-store")]
                + headers.map { (name: $0.0, value: $0.1) },
            body: Array(body))
    }

    static func error(_ status: Int, _ code: String, _ message: String, headers: [(String, String)] = [])
        -> HTTPResponse
    {
        json(status, ["error": ["code": code, "message": message]], headers: headers)
    }

    /// The listener serving `api` on `address`, with `configuration`'s limits and one thread.
    package static func listener(
        _ api: AdminAPI, on address: ListenAddress, like configuration: HTTPServerConfiguration
    ) throws(HTTPServerError) -> HTTPServer {
        try HTTPServer.sideListener(
            on: address, like: configuration, error: { error($0, $1, $2, headers: $3) },
            handler: { api.respond(to: $0) })
    }
}

/// The admin API's request counts (``AdminAPI/writeMetrics(to:)``).
final class AdminOutcomes: Sendable {
    let succeeded = Atomic<Int>(0)
    /// Node ids whose availability a batch changed.
    let availabilityChanges = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    let unauthorized = Atomic<Int>(0)
    let limited = Atomic<Int>(0)
    let notFound = Atomic<Int>(0)
}
