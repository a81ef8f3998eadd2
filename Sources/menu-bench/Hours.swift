import Foundation
import HTTPCore
import MenuAvailability
import MenuModel
import MenuService

/// `menu-bench --hours FILE` (issue 27 §3): the menu of FILE in Europe/Paris with weekday
/// breakfast and evening hours (07:00-10:30, 18:00-23:00) on 1,000 of its groups spread over the
/// tree, without a socket:
/// - what the hours say at an instant (`MenuHours.state(at:)`: every scheduled group closed or
///   open, each one's next opening, the next change), computed, and from its cache;
/// - a boundary applied (`expireAvailability`: the overlay advanced, resolved and served);
/// - `Benchmarks/http.sh`'s page (`GET /rows`, limit 50) now, with `?at=` an evening instant
///   asked before, and with `?at=` another day each time (its menu computed).
enum HoursFigures {
    static let scheduledGroups = 1_000

    static func measure(_ path: String, plan: TimingPlan) throws -> String {
        let menu = try scheduledMenu(path)
        guard let hours = MenuHours(menu: menu) else { throw BenchError.childFailed("the menu got no hours") }
        let monday = try Timestamp(rfc3339: "2026-12-07T08:00:00Z")  // 09:00 in Paris: breakfast open
        let coldStateTime = plan.nanosecondsPerOp { iteration in
            MenuHours(menu: menu)!.state(at: monday.adding(milliseconds: Int64(iteration % 1440) * 60_000)).closed.count
        }
        let stateTime = plan.nanosecondsPerOp { iteration in
            hours.state(at: monday.adding(milliseconds: Int64(iteration % 1440) * 60_000)).closed.count
        }
        let closedAt = hours.state(at: monday.adding(milliseconds: 4 * 3_600_000)).closed.count  // 13:00
        let (service, headers, count, rows, page) = try HandlerFigures.sessionPage(menu)
        let boundaries = [monday, monday.adding(milliseconds: 4 * 3_600_000)]
        let boundaryTime = plan.nanosecondsPerOp { iteration in
            service.expireAvailability(now: boundaries[iteration % 2]).count
        }
        let nowTime = plan.nanosecondsPerOp { _ in service.respond(to: rows).body.count }
        let atRows = HTTPRequest(
            method: "GET", path: "/rows",
            query: [("offset", String(count / 2)), ("limit", "50"), ("at", "2026-12-07T19:00:00Z")], headers: headers)
        let atPage = service.respond(to: atRows)
        guard atPage.status == 200 else { throw BenchError.childFailed("GET /rows?at= answered \(atPage.status)") }
        let atTime = plan.nanosecondsPerOp { _ in service.respond(to: atRows).body.count }
        // Another day each time: never a span already computed.
        let coldAtTime = plan.nanosecondsPerOp { iteration in
            let at = monday.adding(milliseconds: Int64(iteration + 1) * 86_400_000 + 39_600_000).rfc3339
            return service.respond(
                to: HTTPRequest(
                    method: "GET", path: "/rows", query: [("offset", String(count / 2)), ("limit", "50"), ("at", at)],
                    headers: headers)
            ).body.count
        }
        return
            "| what the hours say at an instant, computed (\(scheduledGroups) scheduled groups, \(closedAt) closed at 13:00) | \(Report.time(coldStateTime)) |"
            + "\n| the same, an instant whose span was computed before | \(Report.time(stateTime)) |"
            + "\n| a boundary applied (`expireAvailability`, \(menu.nodeCount) nodes) | \(Report.time(boundaryTime)) |"
            + "\n| `GET /rows` limit 50 now (\(page.body.count) bytes) | \(Report.time(nowTime)) |"
            + "\n| the same with `?at=` an instant of a span computed before (\(atPage.body.count) bytes) | \(Report.time(atTime)) (\(String(format: "%.1f×", atTime / nowTime))) |"
            + "\n| the same with `?at=` of another day each time | \(Report.time(coldAtTime)) (\(String(format: "%.0f×", coldAtTime / nowTime))) |"
    }

    /// The menu of `path` with a time zone and hours on every k-th group, `scheduledGroups` in all.
    static func scheduledMenu(_ path: String) throws -> Menu {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard var root = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw BenchError.childFailed("\(path) is not a JSON object")
        }
        var groups = 0
        func count(_ items: [Any]) {
            for case let node as [String: Any] in items {
                if let children = node["items"] as? [Any] {
                    groups += 1
                    count(children)
                }
            }
        }
        count(root["items"] as? [Any] ?? [])
        let every = max(1, groups / scheduledGroups)
        let ranges: [[String: Any]] = [
            ["days": ["mon", "tue", "wed", "thu", "fri"], "from": "07:00", "to": "10:30"],
            ["from": "18:00", "to": "23:00"]
        ]
        var seen = 0
        var scheduled = 0
        func schedule(_ items: [Any]) -> [Any] {
            items.map { item in
                guard var node = item as? [String: Any], let children = node["items"] as? [Any] else { return item }
                if seen % every == 0, scheduled < scheduledGroups {
                    node["hours"] = ranges
                    scheduled += 1
                }
                seen += 1
                node["items"] = schedule(children)
                return node
            }
        }
        root["items"] = schedule(root["items"] as? [Any] ?? [])
        root["timeZone"] = "Europe/Paris"
        return try Menu(jsonData: try JSONSerialization.data(withJSONObject: root))
    }
}
