import DurableTestSupport
import Foundation
import HTTPCore
import MenuAvailability
import MenuModel
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuSessionsDurable
import MenuSessionsRedis
import NaiveReference
import RedisTestSupport
import Testing

/// Opening hours as sessions read them, on each session store, against the naive reference
/// (``NaiveOpeningHours``: Foundation's clock, node by node): random Paris menus with hours and
/// exceptions around the October DST night, sessions in random expansion states, dishes sold out
/// by the admin API. At random instants (`?at=`) every row of every session is closed exactly
/// when the reference closes it or a group above it, opens when the reference says, shows its
/// admin state otherwise, and `/rows` and `/count` carry the reference's next change; counts and
/// searches are what they are without `at`. Then the service's clock walks from boundary to
/// boundary: at each, every session's feed takes its held rows to a fresh read.
@Suite struct OpeningHoursServiceDifferentialTests {
    typealias Store = DifferentialStore

    typealias Table = (rows: [(id: String, availability: NSDictionary?)], revision: Int, availability: Int)

    static func table(_ service: MenuAPI, _ session: String) throws -> Table {
        let response = service.call("GET", "/rows", query: [("limit", "500")], session: session)
        try #require(response.status == 200)
        let rows = try #require(response.json["rows"] as? [[String: Any]])
        return (
            rows.map { ($0["id"] as! String, $0["availability"] as? NSDictionary) },
            try #require(response.json["revision"] as? Int), response.json["availabilityRevision"] as? Int ?? 0
        )
    }

    /// A row's availability: its state, when it ends (Unix seconds), the group it shows, and
    /// whether it is computed from the rows under it.
    struct Expected: Equatable, CustomStringConvertible {
        var state: String
        var until: Int64? = nil
        var from: String? = nil
        var computed = false
        var description: String {
            "\(state) until \(text(until) ?? "-")" + (from.map { " from \($0)" } ?? "") + (computed ? " computed" : "")
        }
    }

    static func text(_ seconds: Int64?) -> String? { seconds.map { Timestamp(milliseconds: $0 * 1000).rfc3339 } }

    @Test(arguments: Store.allCases)
    func everyRowAtEveryInstantAndEveryBoundaryFollowTheReference(store: Store) throws {
        var rng = SplitMix64(state: 0x5E55_1045 ^ UInt64(store.rawValue.utf8.count))
        let transition = RandomSchedules.transitions(of: "Europe/Paris", in: 2026).last!
        let around = LocalDate(daysSinceEpoch: Int(transition / 86_400))
        let directory = DurableTemporaryDirectory()
        defer { directory.remove() }
        let redis = store == .redis ? try RedisServerProcess() : nil
        defer { redis?.stop() }
        var checked = (rows: 0, closed: 0, boundaries: 0)
        for round in 0 ..< 3 {
            let json = RandomSchedules.config(zone: "Europe/Paris", around: around, using: &rng)
            let menu = try Menu(jsonData: Data(json.utf8))
            guard let naive = NaiveOpeningHours(menu: menu, zoneName: "Europe/Paris") else { continue }
            let clock = OpeningHoursServiceTests.FixedClock(Timestamp(milliseconds: (transition - 86_400) * 1000))
            let (sessions, close) = try store.make(
                on: menu, round: round, in: directory, redis: redis, prefix: "hours")
            defer { close() }
            let service = MenuAPI(store: sessions, maxLimit: 500, clock: { clock.now })
            let context = "\(store) round \(round), \(json)"

            // Three sessions in random states; a few dishes sold out.
            let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
            var ids: [String] = []
            for _ in 0 ..< 3 {
                let id = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
                for _ in 0 ..< Int.random(in: 0 ... 6, using: &rng) {
                    guard let group = groups.randomElement(using: &rng) else { break }
                    #expect(service.call("POST", "/groups/\(group)/toggle", session: id).status == 200)
                }
                ids.append(id)
            }
            let leaves = menu.nodes.filter { !menu.isGroup($0) }
            let soldOut = Set(leaves.shuffled(using: &rng).prefix(Int.random(in: 0 ... 4, using: &rng)))
            if !soldOut.isEmpty {
                _ = try service.updateAvailability(
                    soldOut.map { .init(id: menu.id(of: $0), Availability(state: .soldOut)) }, now: clock.now)
            }

            /// What `node`'s row shows at `t` by the rules, node by node: closed by its own hours
            /// or a group's (when it opens: it and every group above it together); else its own
            /// admin entry; else the entry of the nearest closed group above it; else, for a group
            /// all of whose rows show one, a computed entry (their state when they all show the
            /// same, else paused; the earliest until).
            var memo: [Int64: [Menu.Node: Expected?]] = [:]
            func expected(_ node: Menu.Node, at t: Int64) -> Expected? {
                if let known = memo[t]?[node] { return known }
                let found = computeExpected(node, at: t)
                memo[t, default: [:]][node] = .some(found)
                return found
            }
            func computeExpected(_ node: Menu.Node, at t: Int64) -> Expected? {
                let open = naive.isOpen(node, at: t)
                if menu.openingHours(of: node) != nil, !open {
                    return Expected(state: "closed", until: naive.nextOpening(of: node, after: t, days: 40))
                }
                if soldOut.contains(node) { return Expected(state: "sold_out") }
                if !open {
                    var above = menu.parent(of: node)
                    while let group = above, menu.openingHours(of: group) == nil || naive.isOpen(group, at: t) {
                        above = menu.parent(of: group)
                    }
                    return Expected(
                        state: "closed", until: naive.nextOpening(of: node, after: t, days: 40),
                        from: above.map(menu.id(of:)))
                }
                guard menu.isGroup(node) else { return nil }
                let rows = (node + 1 ..< menu.subtreeEnd(node)).filter { !menu.isGroup($0) }
                let shown = rows.compactMap { expected($0, at: t) }
                guard !rows.isEmpty, shown.count == rows.count else { return nil }
                let states = Set(shown.map(\.state))
                return Expected(
                    state: states.count == 1 ? states.first! : "paused", until: shown.compactMap(\.until).min(),
                    computed: true)
            }

            /// Every row of `rows` against the reference at `t`.
            func expectRows(_ rows: [[String: Any]], at t: Int64, _ label: String) {
                for row in rows {
                    let id = row["id"] as! String
                    let node = menu.node(withID: id)!
                    let availability = row["availability"] as? [String: Any]
                    let shown = availability.map {
                        Expected(
                            state: $0["state"] as? String ?? "?",
                            until: ($0["until"] as? String).flatMap { try? Timestamp(rfc3339: $0) }
                                .map { $0.milliseconds / 1000 },
                            from: $0["from"] as? String, computed: $0["computed"] as? Bool == true)
                    }
                    let reference = expected(node, at: t)
                    #expect(
                        shown == reference,
                        "\(label): \(id) shows \(String(describing: shown)), the reference \(String(describing: reference)); \(context)"
                    )
                    checked.rows += 1
                    if reference?.state == "closed" { checked.closed += 1 }
                }
            }
            func nextChange(after t: Int64) -> Int64? {
                naive.nextChange(
                    after: t, before: naive.firstInstant(naive.localDate(t).adding(days: 9), minute: 0), days: 10)
            }

            // Instants asked about with ?at=.
            for _ in 0 ..< 6 {
                let t = transition + Int64.random(in: -86_400 ... 2 * 86_400, using: &rng)
                let at = Timestamp(milliseconds: t * 1000).rfc3339
                let expectedChange = Self.text(nextChange(after: t))
                for id in ids {
                    let page = service.call("GET", "/rows", query: [("limit", "500"), ("at", at)], session: id)
                    try #require(page.status == 200, "\(String(decoding: page.body, as: UTF8.self))")
                    expectRows(page.json["rows"] as? [[String: Any]] ?? [], at: t, "at \(at)")
                    #expect(page.json["nextChangeAt"] as? String == expectedChange, "at \(at): \(context)")
                    let count = service.call("GET", "/count", query: [("at", at)], session: id)
                    #expect(count.json["nextChangeAt"] as? String == expectedChange, "at \(at): \(context)")
                    let plain = service.call("GET", "/count", session: id)
                    #expect(count.json["count"] as? Int == plain.json["count"] as? Int, "hours hide nothing")
                    let search = service.call("GET", "/search", query: [("q", "n1"), ("at", at)], session: id)
                    let plainSearch = service.call("GET", "/search", query: [("q", "n1")], session: id)
                    #expect(search.status == 200 && search.json["total"] as? Int == plainSearch.json["total"] as? Int)
                }
            }

            // The clock walks through the boundaries; each session's feed follows.
            var now = transition - 86_400
            _ = service.expireAvailability(now: clock.now)
            var held = try ids.map { try Self.table(service, $0) }
            for _ in 0 ..< 6 {
                guard let boundary = nextChange(after: now) else { break }
                now = boundary
                clock.set(Timestamp(milliseconds: now * 1000))
                _ = service.expireAvailability(now: clock.now)
                checked.boundaries += 1
                for (index, id) in ids.enumerated() {
                    let fresh = try Self.table(service, id)
                    let rows = service.call("GET", "/rows", query: [("limit", "500")], session: id)
                    expectRows(rows.json["rows"] as? [[String: Any]] ?? [], at: now, "now \(Self.text(now)!)")
                    let feed = service.call(
                        "GET", "/changes",
                        query: [
                            ("since", "\(held[index].revision)"), ("availabilitySince", "\(held[index].availability)")
                        ],
                        session: id)
                    try #require(feed.status == 200)
                    var table = held[index]
                    if let availability = feed.json["availability"] as? [String: Any] {
                        for row in try #require(availability["reconfigured"] as? [Int]) {
                            try #require(row < table.rows.count)
                            table.rows[row] = fresh.rows[row]
                        }
                    }
                    for (mine, theirs) in zip(table.rows, fresh.rows) {
                        #expect(
                            mine.id == theirs.id && mine.availability == theirs.availability,
                            "at \(Self.text(now)!) the feed leaves \(mine.id) at \(String(describing: mine.availability)), a fresh read shows \(String(describing: theirs.availability)); \(context)"
                        )
                    }
                    held[index] = fresh
                }
            }
        }
        #expect(checked.rows >= 100 && checked.closed >= 20 && checked.boundaries >= 6, "\(checked)")
    }
}
