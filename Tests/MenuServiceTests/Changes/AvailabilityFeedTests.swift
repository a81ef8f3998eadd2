import Foundation
import HTTPCore
import MenuAvailability
import MenuService
import MenuServiceTestSupport
import MenuSessions
import MenuTestSupport
import NaiveReference
import Testing

@testable import MenuModel

/// A change of availability in the changes feed (issue 27 §2): a client that holds a session's
/// rows at revision R and availability revision A, and asks `GET /changes?since=R&availabilitySince=A`,
/// applies the splices, then fetches again the rows `availability.reconfigured` names: every row
/// then shows what a fresh read shows. Availability moves no session revision.
struct AvailabilityFeedTests {
    /// The session's whole table: each row's id and availability (nil when available), and the
    /// revisions it was read at.
    private static func table(_ service: MenuAPI, _ session: String) throws -> (
        rows: [(id: String, availability: NSDictionary?)], revision: Int, availability: Int
    ) {
        let response = service.call("GET", "/rows", query: [("offset", "0"), ("limit", "500")], session: session)
        try #require(response.status == 200)
        let rows = try #require(response.json["rows"] as? [[String: Any]])
        return (
            rows.map { ($0["id"] as! String, $0["availability"] as? NSDictionary) },
            try #require(response.json["revision"] as? Int), response.json["availabilityRevision"] as? Int ?? 0
        )
    }

    @Test(arguments: 0 ..< 4 as Range<UInt64>)
    func theSplicesThenTheReconfiguredRowsTakeAClientToWhatAFreshReadShows(seed: UInt64) throws {
        var rng = SplitMix64(state: 0xA7F3 ^ seed &* 0x9E37_79B9_7F4A_7C15)
        let now = Timestamp(milliseconds: 1_800_000_000_000)
        for round in 0 ..< 25 {
            let menu = try makeMenu(randomTree(nodes: Int.random(in: 1 ... 80, using: &rng), maxDepth: 4, using: &rng))
            let service = MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu), maxLimit: 500)
            let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
            let groups = menu.nodes.filter(menu.isGroup).map(menu.id(of:))
            func randomBatch() -> [AvailabilityOverlay.Change] {
                menu.nodes.shuffled(using: &rng).prefix(Int.random(in: 1 ... 6, using: &rng)).map { node in
                    let state = [AvailabilityState.available, .soldOut, .paused].randomElement(using: &rng)!
                    return .init(
                        id: menu.id(of: node),
                        Availability(
                            state: state, reason: state == .available ? nil : "r\(Int.random(in: 0 ... 2, using: &rng))"
                        ))
                }
            }
            func toggle() {
                guard let group = groups.randomElement(using: &rng) else { return }
                #expect(service.call("POST", "/groups/\(group)/toggle", session: session).status == 200)
            }
            // Some history before the client reads.
            for _ in 0 ..< Int.random(in: 0 ... 3, using: &rng) {
                _ = try service.updateAvailability(randomBatch(), now: now)
                toggle()
            }
            var held = try Self.table(service, session)
            // Writes and batches in any order, then the feed.
            for _ in 0 ..< Int.random(in: 1 ... 5, using: &rng) {
                if Bool.random(using: &rng) {
                    _ = try service.updateAvailability(randomBatch(), now: now)
                } else {
                    toggle()
                }
            }
            let feed = service.call(
                "GET", "/changes",
                query: [("since", "\(held.revision)"), ("availabilitySince", "\(held.availability)")], session: session)
            try #require(feed.status == 200, "\(String(decoding: feed.body, as: UTF8.self))")
            let fresh = try Self.table(service, session)
            // Inserted rows are fetched once the splices are applied, from the table now.
            let placeholder = (id: "", availability: nil as NSDictionary?)
            for entry in try #require(feed.json["changes"] as? [[String: Any]]) {
                guard let change = entry["change"] as? [String: Int] else { continue }
                let (at, inserted, removed) = (change["at"]!, change["inserted"]!, change["removed"]!)
                try #require(at + removed <= held.rows.count)
                held.rows.replaceSubrange(
                    at ..< at + removed, with: Array(repeating: placeholder, count: inserted))
            }
            try #require(held.rows.count == fresh.rows.count)
            for index in held.rows.indices where held.rows[index].id.isEmpty { held.rows[index] = fresh.rows[index] }
            #expect(held.rows.map(\.id) == fresh.rows.map(\.id), "seed \(seed) round \(round): the splices")
            let moved = fresh.availability != held.availability
            let availability = feed.json["availability"] as? [String: Any]
            #expect((availability != nil) == moved, "seed \(seed) round \(round): an entry exactly when it moved")
            #expect(feed.json["availabilityRevision"] as? Int ?? 0 == fresh.availability)
            if let availability {
                #expect(availability["since"] as? Int == held.availability)
                #expect(availability["revision"] as? Int == fresh.availability)
                for row in try #require(availability["reconfigured"] as? [Int]) {
                    try #require(row < held.rows.count)
                    held.rows[row] = fresh.rows[row]
                }
            }
            for (index, (row, now)) in zip(held.rows, fresh.rows).enumerated() {
                #expect(
                    row.availability == now.availability,
                    "seed \(seed) round \(round) row \(index) \(row.id): \(String(describing: row.availability)) against \(String(describing: now.availability))"
                )
            }
            // The session's revision counts its writes only.
            #expect(feed.json["revision"] as? Int == fresh.revision)
        }
    }

    @Test func aRevisionTheHistoryNoLongerReachesAsksForEveryRowAndNoneIsAnEmptyFeed() throws {
        let menu = try storeTestMenu()
        let service = MenuAPI(menu: menu, store: InMemorySessionStore(menu: menu), maxLimit: 500)
        let session = try #require(service.call("POST", "/sessions").json["sessionId"] as? String)
        let now = Timestamp(milliseconds: 1_800_000_000_000)
        // Without availabilitySince: as before, no availability in the answer.
        _ = try service.updateAvailability([.init(id: "c1", Availability(state: .soldOut))], now: now)
        let plain = service.call("GET", "/changes", query: [("since", "0")], session: session)
        #expect(plain.json["availability"] == nil && plain.json["availabilityRevision"] as? Int == 1)
        let current = service.call(
            "GET", "/changes", query: [("since", "0"), ("availabilitySince", "1")], session: session)
        #expect(current.json["availability"] == nil)
        let unknown = service.call(
            "GET", "/changes", query: [("since", "0"), ("availabilitySince", "7")], session: session)
        #expect(
            unknown.json["availability"] as? NSDictionary
                == ["since": 7, "revision": 1, "reconfigured": NSNull()] as NSDictionary)
        let bad = service.call(
            "GET", "/changes", query: [("since", "0"), ("availabilitySince", "-1")], session: session)
        #expect(bad.status == 400 && bad.errorCode == "invalid_parameter")
    }
}
