// Opening hours under fuzzing, two ways.
//
// The `at` target: the input as `?at=` of `GET /rows`, `/count`, `/search` and `/nodes/{id}` of a
// menu in Europe/Paris with hours through midnight, in the hour DST skips and on exception dates.
// Every answer is well formed (a 400 is `invalid_parameter`); an instant read shows exactly the
// rows MenuHours closes then, each closed one opening after it, and a `nextChangeAt` after it.
//
// The `config` target's menus with hours (``checkHours(of:seed:)``): at instants the input picks,
// nothing changes before the next change, and a closed node is open at its `until`.

import Foundation
import HTTPCore
import MenuAvailability
import MenuModel
import MenuService
import MenuSessions

extension FuzzTarget {
    static let hoursService: MenuAPI = {
        let json = #"""
            {"timeZone":"Europe/Paris","items":[
             {"id":"breakfast","title":"Breakfast","expanded":true,
              "hours":[{"days":["mon","tue","wed","thu","fri"],"from":"07:00","to":"10:30"},{"days":["sun"],"from":"02:00","to":"03:30"}],
              "exceptions":[{"date":"2026-12-25","closed":true},{"date":"2026-12-31","hours":[{"from":"07:00","to":"12:00"}]}],
              "items":[{"id":"eggs","title":"Eggs","hours":[{"from":"08:00","to":"10:00"}]},{"id":"toast","title":"Toast"}]},
             {"id":"bar","title":"Bar","expanded":true,"hours":[{"from":"22:00","to":"02:00"}],"items":[{"id":"beer","title":"Beer"}]},
             {"id":"tea","title":"Tea"}]}
            """#
        let menu = try! Menu(jsonData: Data(json.utf8))
        return MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu, maxSessions: 8))
    }()

    static func checkAt(_ bytes: [UInt8]) -> String? {
        let value = String(decoding: bytes, as: UTF8.self)
        let instant = try? Timestamp(rfc3339: MenuAPI.offsetSignRestored(value))
        let at: [(name: String, value: String?)] = [(name: "at", value: value)]
        let targets: [(path: String, query: [(name: String, value: String?)])] = [
            ("/rows", [(name: "limit", value: "500")]), ("/count", []), ("/search", [(name: "q", value: "e")]),
            ("/nodes/eggs", [])
        ]
        var counts: [Int] = []
        for (path, extra) in targets {
            let response = hoursService.respond(to: HTTPRequest(method: "GET", path: path, query: extra + at))
            if let problem = checkAnswer(response) { return "\(path): \(problem)" }
            let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
            guard let instant else {
                let code = (object["error"] as? [String: Any])?["code"] as? String
                guard response.status == 400, code == "invalid_parameter" else {
                    return "\(path): an at no Timestamp reads got \(response.status) \(code ?? "")"
                }
                continue
            }
            guard response.status == 200 else { return "\(path): \(instant.rfc3339) got \(response.status)" }
            if path == "/rows" || path == "/count" {
                counts.append(object["count"] as? Int ?? -1)
                guard let next = (object["nextChangeAt"] as? String).flatMap({ try? Timestamp(rfc3339: $0) }),
                    next > instant
                else { return "\(path) at \(instant.rfc3339): nextChangeAt \(object["nextChangeAt"] ?? "absent")" }
            }
            if path == "/rows", let problem = checkClosedRows(object["rows"] as? [[String: Any]] ?? [], at: instant) {
                return "/rows at \(instant.rfc3339): \(problem)"
            }
        }
        return counts.count == 2 && counts[0] != counts[1] ? "/rows counts \(counts[0]), /count \(counts[1])" : nil
    }

    /// A row is closed exactly when MenuHours closes it or a group above it, and opens after `at`.
    static func checkClosedRows(_ rows: [[String: Any]], at instant: Timestamp) -> String? {
        let menu = hoursService.menu
        let closed = MenuHours(menu: menu)!.state(at: instant).closed
        for row in rows {
            guard let id = row["id"] as? String, let node = menu.node(withID: id) else { return "a row without an id" }
            var above: Menu.Node? = node
            var expected = false
            while let current = above, !expected {
                expected = closed.keys.contains(menu.id(of: current))
                above = menu.parent(of: current)
            }
            let availability = row["availability"] as? [String: Any]
            guard (availability?["state"] as? String == "closed") == expected else {
                return "\(id) is \(availability?["state"] ?? "available"), the hours say closed: \(expected)"
            }
            if let until = availability?["until"] as? String {
                guard let opening = try? Timestamp(rfc3339: until), opening > instant else {
                    return "\(id) opens at \(until)"
                }
            }
        }
        return nil
    }

    /// For a menu with hours: at three instants `seed` picks (two on Europe's DST days), the
    /// closed set holds until just before the next change, and each closed node is open at its
    /// `until`.
    static func checkHours(of menu: Menu, seed: [UInt8]) -> String? {
        guard let hours = MenuHours(menu: menu) else { return nil }
        let picked = seed.prefix(8).reduce(Int64(0)) { $0 &* 131 &+ Int64($1) }
        let instants = [
            Timestamp(milliseconds: 1_774_746_000_000 + picked % 7_200_000),  // 2026-03-29, spring forward
            Timestamp(milliseconds: 1_792_890_000_000 + picked % 7_200_000),  // 2026-10-25, fall back
            Timestamp(milliseconds: (picked & 0x7FFF_FFFF) % 4_102_444_800 * 1000)  // 1970 to 2100
        ]
        for instant in instants {
            let state = hours.state(at: instant)
            if let next = state.nextChange {
                guard next > instant else { return "at \(instant.rfc3339) the next change is \(next.rfc3339)" }
                let before = hours.state(at: Timestamp(milliseconds: next.milliseconds - 1))
                guard Set(before.closed.keys) == Set(state.closed.keys) else {
                    return "closed at \(instant.rfc3339): \(state.closed.keys.sorted()), before its next change "
                        + "\(next.rfc3339): \(before.closed.keys.sorted())"
                }
            }
            for (id, opening) in state.closed {
                guard let opening else { continue }
                guard opening > instant else { return "\(id) closed at \(instant.rfc3339) opens at \(opening.rfc3339)" }
                guard hours.state(at: opening).closed[id] == nil else {
                    return "\(id) closed at \(instant.rfc3339) is still closed at its until \(opening.rfc3339)"
                }
            }
        }
        return nil
    }
}
