import Foundation
import HTTPCore
import HTTPServer
import MenuAvailability
import MenuModel
import MenuService
import MenuSessions
import MenuSessionsDurable

/// The parsers of untrusted input that `menu-fuzz` drives, one input at a time, and the check of
/// each outcome. The fuzzer and the corpus regression test (`FuzzCorpusTests`) run the same code.
///
/// Invariant: ``check(_:)`` never traps for any input; it returns what is wrong with the outcome.
/// Cost: one parse (plus, for `request`, `body` and `portable`, Foundation JSON parses of the answers).
package enum FuzzTarget: String, CaseIterable, Sendable {
    /// The menu config loader (JSON decoding, validation, error paths); a menu that loads must
    /// walk as many rows as it counts, under toggles, and its opening hours must agree with
    /// themselves (``checkHours(of:seed:)``).
    case config
    /// Routing, query parameters, session header and body over a whole request; the same bytes
    /// read as a request head by HTTPServer's framing decision (``checkFraming(head:)``).
    case request
    /// The `PUT /groups/{id}/expansion` body parser.
    case body
    /// The `POST /sessions` body parser (a portable expansion), and a session made from it read
    /// back and made again.
    case portable
    /// The durable store's file reader (resynchronisation, length repair), as a journal and as a
    /// snapshot; its invariants are checked inside (a violation traps).
    case durable
    /// The `If-None-Match` / `If-Match` parser (``EntityTagCondition``), alone and through a read
    /// and a write of a session: first line If-None-Match, the rest If-Match lines.
    case preconditions
    /// The last entry of `X-Forwarded-For` as an IP address, and the client address of a request
    /// from a trusted proxy; an address found must print and parse back to itself.
    case forwarded
    /// `X-Request-Id`: a value accepted is exactly the input and sane (1 to 128 printable ASCII
    /// bytes, no space); one refused is replaced by a made id, which is sane too.
    case requestid
    /// The CORS headers (`Origin`, `Access-Control-Request-Method`, `-Headers`) as ``CrossOriginRequest``
    /// reads them, a `--cors-origin` value, and a preflight and a read through a service with a policy.
    case cors
    /// `q` and `filter` of a search (``SearchParameters``): first line `q` (`-`: none), later lines
    /// filters, through `/search`, `/rows` and `/count`, and the matches against a naive scan.
    case search
    /// The query of `GET /changes` (`since`, `wait`): an answer now, or a long poll that a write of
    /// its session releases with that write; never a waiter left held.
    case changes
    /// `Accept` and `Last-Event-ID` of `GET /changes` (``EventStreamRequest``): a stream opens with
    /// its `open` event and carries a write of its session; anything else is a well-formed answer.
    case events
    /// `Accept-Language` (``LanguagePreference``) and its RFC 4647 lookup, a language tag's shape
    /// (``LanguageTag``), and `?lang=`, through reads of a menu with locales (`/rows`, `/count`, `/menu`).
    case language
    /// The admin API's `Authorization: Bearer` field (``BearerCredentials``) and the match of its
    /// token against a token file (``AdminTokens``).
    case admin
    /// An RFC 3339 time (``Timestamp``), as an availability's `until` is sent: one accepted writes
    /// back in UTC and reads back to the same millisecond; one refused says why.
    case timestamp
    /// The `PUT /admin/availability` body (``AvailabilityBatchParser``), written back and read
    /// again, then applied to an overlay on a small menu and resolved.
    case availability
    /// `?at=` (an RFC 3339 instant, a `+` sent as a space restored) through reads of a menu with
    /// opening hours: the rows closed then are those MenuHours closes, and `nextChangeAt` is later.
    case at
    /// `?ancestors=` of `GET /rows` (``MenuAPI/booleanParameter(_:in:default:)``), in a session's
    /// tree and a filtered one: `true` answers the first row's groups, each the row at its index.
    case ancestors
    /// The selection bodies (`PUT /nodes/{id}/selection`, `PUT /selection`): the boolean
    /// Foundation reads, and the selection a session then holds.
    case selection

    /// Built once per process: the targets only read it.
    static let service = makeService()
    /// The long-poll and stream targets' own services: each checks that no waiter is left held,
    /// which another target's waits (the corpus tests run targets at once) must not disturb.
    /// With availability at revision 2 (`r` sold out, then `h` paused): `availabilitySince` 0 or
    /// 1 computes the rows to fetch again, another one asks for every row.
    static let changesService: MenuAPI = {
        let service = makeService()
        _ = try! service.updateAvailability([.init(id: "r", Availability(state: .soldOut))])
        _ = try! service.updateAvailability([.init(id: "h", Availability(state: .paused, reason: "x"))])
        return service
    }()
    static let eventsService = makeService()

    private static func makeService() -> MenuAPI {
        let json = Data(
            #"{"items":[{"id":"g","title":"G","expanded":true,"items":[{"id":"r","title":"R"},{"id":"h","title":"H","items":[{"id":"x","title":"X"}]}]}]}"#
                .utf8)
        let menu = try! Menu(jsonData: json)
        return MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu, maxSessions: 64))
    }

    /// Runs one input; nil when the outcome is well formed, otherwise what is wrong with it.
    package func check(_ bytes: [UInt8]) -> String? {
        switch self {
        case .config:
            return Self.checkConfig(bytes)
        case .request:
            let request = Self.request(from: bytes)
            var route = -1
            let reply = Self.service.reply(to: request, route: &route)
            if case .deferred = reply { Self.service.changeWaits.releaseAll() }  // a long poll answers now
            let response = reply.waitForResponse()
            return Self.checkAnswer(response) ?? Self.checkNoSessionPathEcho(request, response)
                ?? checkFraming(head: bytes)
        case .body:
            return Self.checkBody(bytes)
        case .portable:
            return Self.checkPortable(bytes)
        case .durable:
            DurableSalvage.fuzzRead(bytes)
            return nil
        case .forwarded:
            return Self.checkForwarded(bytes)
        case .requestid:
            return Self.checkRequestID(bytes)
        case .preconditions:
            return Self.checkPreconditions(bytes)
        case .cors:
            return Self.checkCORS(bytes)
        case .search:
            return Self.checkSearch(bytes)
        case .language:
            return Self.checkLanguage(bytes)
        case .changes:
            return Self.checkChanges(bytes)
        case .events:
            return Self.checkEvents(bytes)
        case .admin:
            return Self.checkAdmin(bytes)
        case .timestamp:
            return Self.checkTimestamp(bytes)
        case .availability:
            return Self.checkAvailability(bytes)
        case .at:
            return Self.checkAt(bytes)
        case .ancestors:
            return Self.checkAncestors(bytes)
        case .selection:
            return Self.checkSelection(bytes)
        }
    }

    /// Refused with problems, never with a broken tree; a menu that loads walks as many rows (and
    /// leaves) as it counts, before and after its groups are toggled in an order the input picks.
    static func checkConfig(_ bytes: [UInt8]) -> String? {
        let menu: Menu
        do {
            menu = try Menu(jsonData: Data(bytes))
        } catch {
            for problem in error.problems {
                if case .inconsistentStructure = problem.kind { return "the builder broke the tree: \(problem)" }
            }
            return nil
        }
        var view = FlattenedView(menu: menu)
        let groups = menu.nodes.filter(menu.isGroup)
        for step in 0 ... min(groups.count, 8) {
            let rows = view.visibleNodes(offset: 0, limit: view.count + 1)
            let leaves = rows.count { !menu.isGroup($0.node) }
            guard rows.count == view.count, leaves == view.leafCount else {
                return
                    "walked \(rows.count) rows (\(leaves) leaves), count \(view.count) (\(view.leafCount)) at step \(step)"
            }
            guard step < groups.count else { break }
            let group = groups[Int(bytes[(step * 7) % bytes.count]) % groups.count]
            _ = try? view.toggle(menu.id(of: group))
        }
        return checkHours(of: menu, seed: bytes)
    }

    /// An address found prints and parses back to itself; a request from the proxy always has a
    /// client address (the proxy's own when the header names none).
    static func checkForwarded(_ bytes: [UInt8]) -> String? {
        if let address = HTTPRequest.lastForwardedAddress(in: bytes), IPAddress(address.description) != address {
            return "\(address) does not parse back to itself"
        }
        let proxy = IPAddress(high: 0, low: 0xFFFF_0A00_0001)  // 10.0.0.1
        let request = HTTPRequest(
            method: "POST", path: "/sessions",
            headers: [("X-Forwarded-For", String(decoding: bytes, as: UTF8.self))], peerAddress: proxy)
        return request.clientAddress(trustedProxy: proxy) == nil
            ? "no client address for a request from the proxy" : nil
    }

    static func checkRequestID(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        let sane = !bytes.isEmpty && bytes.count <= RequestID.maxLength && bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
        if let accepted = RequestID(client: text) {
            guard sane, accepted.value == text else {
                return "accepted \(String(reflecting: accepted.value)) for \(bytes)"
            }
        } else if sane {
            return "refused the sane id \(String(reflecting: text))"
        }
        let made = RequestID(madeAt: bytes.reduce(0) { $0 &* 31 &+ Int($1) })
        return RequestID.isMade(made.value) && RequestID.isSane(made.value)
            ? nil : "made \(String(reflecting: made.value))"
    }

    /// A path under `/sessions/` (where session ids went before `X-Session-Id`) is never served
    /// and its id never echoed: the answer is 404 `moved`, and a body holding what followed
    /// `/sessions/` (8 bytes or more, so not a word of the message by chance) is a finding.
    static func checkNoSessionPathEcho(_ request: HTTPRequest, _ response: HTTPResponse) -> String? {
        let path = request.path
        guard path.hasPrefix("/sessions/"), path.utf8.count > "/sessions/".utf8.count else { return nil }
        guard response.status == 404 else {
            return "\(request.method) \(path.prefix(60)) answered \(response.status), not 404 moved"
        }
        let rest = Array(path.utf8.dropFirst("/sessions/".utf8.count))
        guard rest.count >= 8 else { return nil }
        return response.body.indices.contains { response.body[$0...].starts(with: rest) }
            ? "the answer echoes the id in the path" : nil
    }

    /// Splits the input into request parts on newline bytes: method, path, query pairs, session
    /// header, body.
    static func request(from bytes: [UInt8]) -> HTTPRequest {
        let parts = bytes.split(separator: 0x0A, maxSplits: 4, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        func part(_ index: Int) -> String { index < parts.count ? parts[index] : "" }
        let methods = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"]
        let method = methods.contains(part(0)) ? part(0) : methods[Int(bytes.first ?? 0) % methods.count]
        let query = part(2).split(separator: "&").map { pair -> (name: String, value: String?) in
            let kv = pair.split(separator: "=", maxSplits: 1)
            return (String(kv.first ?? ""), kv.count > 1 ? String(kv[1]) : nil)
        }
        var headers: [(name: String, value: String)] = []
        if !part(3).isEmpty { headers.append(("x-session-id", part(3))) }
        return HTTPRequest(method: method, path: part(1), query: query, headers: headers, body: Array(part(4).utf8))
    }

    /// No 5xx; a JSON body (none only for 204 and 304, a page file's bytes for its 200); an error is exactly
    /// `{"error":{"code","message"}}`, with the current `revision` beside it on a 412.
    static func checkAnswer(_ response: HTTPResponse) -> String? {
        guard response.status < 500 else { return "5xx for client input: \(response.status)" }
        if response.status == 204 || response.status == 304 {
            return response.body.isEmpty ? nil : "a \(response.status) with a body"
        }
        // The browser page's files (GET /, /app.js, /app.css) are the one 200 that is not JSON.
        if response.status == 200, let type = response.headers.first(where: { $0.name == "Content-Type" })?.value,
            let asset = WebAsset.allCases.first(where: { $0.contentType == type })
        {
            return response.body == asset.bytes ? nil : "\(asset.path) answered other bytes than the file"
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] else {
            return
                "\(response.status) body is not a JSON object: \(String(decoding: response.body.prefix(200), as: UTF8.self))"
        }
        guard response.status >= 400 else { return nil }
        // A 412 adds the session's `revision` beside `error`; `not_visible` adds the hidden node's
        // `path`, an array of ids, inside it.
        let extra = response.status == 412 && object["revision"] is Int ? 1 : 0
        guard object.count == 1 + extra, let error = object["error"] as? [String: Any],
            let code = error["code"] as? String, !code.isEmpty, let message = error["message"] as? String,
            !message.isEmpty,
            error.count == (code == "not_visible" ? 3 : 2), code != "not_visible" || error["path"] is [String]
        else { return "\(response.status) is not {\"error\":{\"code\",\"message\"}}: \(object)" }
        return nil
    }

    /// A value or `invalid_body`, for both expansion bodies; where Foundation also reads the body,
    /// both read the same values.
    static func checkBody(_ bytes: [UInt8]) -> String? {
        let foundation = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
        do {
            let ours = try MenuAPI.parseExpansionBody(bytes)
            if let theirs = foundation?["isExpanded"] as? Bool, theirs != ours.isExpanded {
                return "read isExpanded \(ours.isExpanded), Foundation reads \(theirs)"
            }
            if let theirs = foundation?["recursive"] as? Bool, theirs != ours.recursive {
                return "read recursive \(ours.recursive), Foundation reads \(theirs)"
            }
        } catch {
            if error.code != "invalid_body" || error.message.isEmpty {
                return "refused as \(error.code), not invalid_body"
            }
        }
        do {
            let ours = try MenuAPI.parseAllExpansionBody(bytes)
            if let theirs = foundation?["all"] as? String, theirs != ours.rawValue {
                return "read all \(ours.rawValue), Foundation reads \(theirs)"
            }
        } catch {
            if error.code != "invalid_body" || error.message.isEmpty {
                return "refused as \(error.code), not invalid_body"
            }
        }
        return nil
    }
}
