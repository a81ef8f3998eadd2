import Foundation
import HTTPCore
import MenuModel
import MenuService

/// `menu-bench --selection FILE` (issue 28 §5, the model's part): on the menu of FILE, without a
/// socket:
/// - select-all and clear-all (``SelectionState/setAll(_:)``): time, and the bytes the state holds;
/// - selecting a whole top-level group, and one leaf, on a state with 1,000 leaves toggled;
/// - a row's count (``SelectionState/selectedCount(in:of:)``) and a leaf's state, the per-row
///   cost a page with selection pays, on that state;
/// - a page of 50 selected ids in menu order from the middle;
/// - `GET /rows` (`Benchmarks/http.sh`'s page: offset count/2, limit 50, six groups toggled) for a
///   session that selected nothing and for one with the same expansion and 1,000 leaves and every
///   other leaf of the page selected, timed in short batches of each in turn (each pair's ratio).
enum SelectionFigures {
    static func measure(_ path: String, plan: TimingPlan) throws -> String {
        let menu = try Menu(contentsOfFile: path)
        let groups = menu.nodes.filter(menu.isGroup)
        let leaves = menu.nodes.filter { !menu.isGroup($0) }
        var rng = SystemRandomNumberGenerator()
        let topGroup = try groups.first { menu.depth(of: $0) == 0 } ?? { throw BenchError.childFailed("no group") }()

        var everything = SelectionState()
        let allTime = plan.nanosecondsPerOp { iteration in everything.setAll(iteration % 2 == 0) ? 1 : 0 }
        everything.setAll(true)
        let allBytes = everything.heapBytes
        guard everything.selectedCount(of: menu) == leaves.count else {
            throw BenchError.childFailed("select-all selected \(everything.selectedCount(of: menu)) of \(leaves.count)")
        }

        var busy = SelectionState()
        for _ in 0 ..< 1_000 { busy.set(leaves.randomElement(using: &rng)!, selected: true, in: menu) }
        let toggles = busy.toggleCount
        let someGroups = (0 ..< 4_096).map { _ in groups.randomElement(using: &rng)! }
        let someLeaves = (0 ..< 4_096).map { _ in leaves.randomElement(using: &rng)! }
        let groupTime = plan.nanosecondsPerOp { iteration in
            var state = busy
            return state.set(topGroup, selected: iteration % 2 == 0, in: menu) ? 1 : 0
        }
        let leafTime = plan.nanosecondsPerOp { iteration in
            var state = busy
            return state.set(someLeaves[iteration % someLeaves.count], selected: true, in: menu) ? 1 : 0
        }
        let countTime = plan.nanosecondsPerOp { iteration in
            busy.selectedCount(in: someGroups[iteration % someGroups.count], of: menu)
        }
        let leafStateTime = plan.nanosecondsPerOp { iteration in
            busy.isSelected(someLeaves[iteration % someLeaves.count], in: menu) ? 1 : 0
        }
        let middle = busy.selectedCount(of: menu) / 2
        let pageTime = plan.nanosecondsPerOp { _ in busy.selectedLeaves(in: menu, offset: middle, limit: 50).count }
        let (rowsWithout, rowsWith, ratios) = try pages(menu, plan: plan, using: &rng)
        return
            "| select-all, clear-all (\(menu.nodeCount) nodes, \(leaves.count) leaves) | \(Report.time(allTime)) | \(allBytes) B held after select-all |"
            + "\n| select a top-level group (\(menu.leafCount(of: topGroup)) leaves) on a state of \(toggles) toggles, its arrays copied first (a session's write copies them too) | \(Report.time(groupTime)) | |"
            + "\n| select one leaf on that state, copied first | \(Report.time(leafTime)) | \(busy.heapBytes) B held |"
            + "\n| a group's selected count on that state (a row's cost) | \(Report.time(countTime)) | |"
            + "\n| a leaf's state on that state | \(Report.time(leafStateTime)) | |"
            + "\n| 50 selected ids from the middle, in menu order | \(Report.time(pageTime)) | |"
            + "\n| `GET /rows` limit 50, nothing selected | \(Report.time(rowsWithout)) | |"
            + "\n| the same page, 1,000 leaves and half the page's selected | \(Report.time(rowsWith)) | each pair of batches' ratio: median \(String(format: "%.2f×", median(ratios))), \(String(format: "%.2f-%.2f×", ratios.min() ?? 0, ratios.max() ?? 0)) |"
    }

    /// The page's time for a session that selected nothing and for one that selected 1,000
    /// leaves and every other leaf of the page (the same expansion, from `GET /session`), each
    /// round's pair timed one after the other.
    private static func pages(_ menu: Menu, plan: TimingPlan, using rng: inout some RandomNumberGenerator) throws
        -> (without: Double, with: Double, ratios: [Double])
    {
        let (service, headers, _, rows, page) = try HandlerFigures.sessionPage(menu)
        let read = service.respond(to: HTTPRequest(method: "GET", path: "/session", headers: headers))
        guard
            var state = (try JSONSerialization.jsonObject(with: Data(read.body)) as? [String: Any])?["expansion"]
                as? [String: Any],
            let pageRows = (try JSONSerialization.jsonObject(with: Data(page.body)) as? [String: Any])?["rows"]
                as? [[String: Any]]
        else { throw BenchError.childFailed("GET /session or the page did not parse") }
        let pageLeaves = pageRows.filter { $0["isGroup"] as? Bool == false }.compactMap { $0["id"] as? String }
        let leaves = menu.nodes.filter { !menu.isGroup($0) }.map(menu.id(of:))
        let chosen = Set((0 ..< 1_000).map { _ in leaves.randomElement(using: &rng)! })
            .union(pageLeaves.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
        state["selection"] = ["all": false, "toggled": Array(chosen)]
        let created = service.respond(
            to: HTTPRequest(
                method: "POST", path: "/sessions", body: Array(try JSONSerialization.data(withJSONObject: state))))
        guard created.status == 201, let session = created.headers.first(where: { $0.name == "X-Session-Id" })?.value
        else { throw BenchError.childFailed("POST /sessions with a selection answered \(created.status)") }
        let selected = HTTPRequest(
            method: "GET", path: "/rows",
            query: [("offset", rows.query.firstIndex(named: "offset").flatMap(rows.query.value(at:))), ("limit", "50")],
            headers: headers.filter { $0.name != "X-Session-Id" } + [(name: "X-Session-Id", value: session)])
        let answer = String(decoding: service.respond(to: selected).body, as: UTF8.self)
        guard answer.contains("\"selected\":true"), String(decoding: page.body, as: UTF8.self).count > 0 else {
            throw BenchError.childFailed("the page with a selection shows none")
        }
        // Short batches of each page in turn (200 pages, about half a millisecond each): drift and
        // other load touch both alike. Rounds of 75 ms each gave ratios that swung ±15%.
        let batch = 200
        var checksum = 0
        func perPage(_ request: HTTPRequest) -> Double {
            let start = TimingPlan.threadCPUSeconds()
            for _ in 0 ..< batch { checksum &+= service.respond(to: request).body.count }
            return (TimingPlan.threadCPUSeconds() - start) * 1e9 / Double(batch)
        }
        var (without, with) = ([Double](), [Double]())
        for _ in 0 ..< plan.rounds * 60 {
            without.append(perPage(rows))
            with.append(perPage(selected))
        }
        _ = blackHole(checksum)
        return (median(without), median(with), zip(with, without).map { $0 / $1 })
    }
}
