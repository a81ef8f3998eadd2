import Foundation
import HTTPCore
import MenuAvailability
import MenuModel
import MenuService
import MenuSessions

/// `menu-bench --availability FILE` (issue 27 §5): on the menu of FILE, without a socket,
/// - a batch of 100 changes applied (`MenuAPI.updateAvailability`, what `PUT /admin/availability`
///   runs after parsing): 100 leaves sold out with a time and a reason, then made available again;
/// - `GET /rows` (`Benchmarks/http.sh`'s page: offset count/2, limit 50, six groups toggled)
///   with nothing unavailable, with 1,000 leaves unavailable elsewhere, and with 1,000 that
///   include every row of the page;
/// - the memory an unavailable node takes (the overlay's entry, its resolution and its row JSON),
///   from the resident size with 10,000 and with 110,000 entries;
/// - what a change of the nodes hidden while unavailable costs: the listing without a group
///   (`Menu.hiding`) and its install, as a reload's.
enum AvailabilityFigures {
    static func measure(_ path: String, plan: TimingPlan) throws -> String {
        let menu = try Menu(contentsOfFile: path)
        let (service, _, _, rows, page) = try HandlerFigures.sessionPage(menu)
        let pageIDs = Set(
            String(decoding: page.body, as: UTF8.self).components(separatedBy: "\"id\":\"").dropFirst()
                .compactMap { $0.split(separator: "\"").first.map(String.init) })
        var generator = SystemRandomNumberGenerator()
        let leaves = menu.nodes.filter { !menu.isGroup($0) }.map(menu.id(of:)).filter { !pageIDs.contains($0) }
        let now = Timestamp.now
        let until = now.adding(milliseconds: 86_400_000)
        func soldOut(_ ids: some Sequence<String>) -> [AvailabilityOverlay.Change] {
            ids.map { .init(id: $0, Availability(state: .soldOut, until: until, reason: "back at 19:30")) }
        }

        let batch = Array(leaves.shuffled(using: &generator).prefix(100))
        let setBatch = soldOut(batch)
        let clearBatch = batch.map { AvailabilityOverlay.Change(id: $0, Availability(state: .available)) }
        let batchTime = plan.nanosecondsPerOp { iteration in
            (try? service.updateAvailability(iteration % 2 == 0 ? setBatch : clearBatch, now: now))?.revision ?? -1
        }
        _ = try service.updateAvailability(clearBatch, now: now)

        // Nothing unavailable and 1,000 elsewhere, round after round: a machine whose speed drifts
        // (a shared one slows under sustained load) moves both alike, and the ratio is each round's.
        let elsewhere = Array(leaves.shuffled(using: &generator).prefix(1_000))
        var oneRound = plan
        oneRound.rounds = 1
        var (noneTimes, elsewhereTimes) = ([Double](), [Double]())
        for _ in 0 ..< plan.rounds {
            noneTimes.append(oneRound.nanosecondsPerOp { _ in service.respond(to: rows).body.count })
            _ = try service.updateAvailability(soldOut(elsewhere), now: now)
            elsewhereTimes.append(oneRound.nanosecondsPerOp { _ in service.respond(to: rows).body.count })
            _ = try service.updateAvailability(
                elsewhere.map { .init(id: $0, Availability(state: .available)) }, now: now)
        }
        let (noneTime, elsewhereTime) = (median(noneTimes), median(elsewhereTimes))
        let roundRatios = zip(elsewhereTimes, noneTimes).map { $0 / $1 }
        let onPage = Array(pageIDs) + elsewhere.prefix(1_000 - pageIDs.count)
        _ = try service.updateAvailability(soldOut(onPage), now: now)
        let markedPage = service.respond(to: rows)
        let onPageTime = plan.nanosecondsPerOp { _ in service.respond(to: rows).body.count }
        _ = try service.updateAvailability(onPage.map { .init(id: $0, Availability(state: .available)) }, now: now)

        let many = Array(leaves.shuffled(using: &generator).prefix(110_000))
        _ = try service.updateAvailability(soldOut(many.prefix(10_000)), now: now)
        let withFew = ResidentMemory.trimmedRSS()
        _ = try service.updateAvailability(soldOut(many.dropFirst(10_000)), now: now)
        let withMany = ResidentMemory.trimmedRSS()
        let perNode = Double(withMany - withFew) / 100_000

        // A change of the hidden set (`whenUnavailable: hide`): the listing without the group's
        // subtree, then served as a reload is. CPU time of this thread, median of five.
        let group = menu.nodes.first { menu.isGroup($0) && menu.subtreeEnd($0) - $0 > 100 } ?? 0
        var listing = menu
        let hidingTime = TimingPlan.medianCPUNanoseconds(runs: 5) { listing = menu.hiding([group]) }
        let installTime = TimingPlan.medianCPUNanoseconds(runs: 5) { service.install(listing) }

        func ratio(_ time: Double) -> String { String(format: "%.2f×", time / noneTime) }
        return
            "| apply a batch of 100 changes (`updateAvailability`, \(menu.nodeCount) nodes) | \(Report.time(batchTime)) |"
            + "\n| `GET /rows` limit 50, nothing unavailable (\(page.body.count) bytes) | \(Report.time(noneTime)) |"
            + "\n| the same, 1,000 leaves unavailable elsewhere | \(Report.time(elsewhereTime)) (each round's ratio: median \(String(format: "%.2f×", median(roundRatios))), \(String(format: "%.2f-%.2f×", roundRatios.min() ?? 0, roundRatios.max() ?? 0))) |"
            + "\n| the same, 1,000 unavailable including all \(pageIDs.count) rows of the page (\(markedPage.body.count) bytes) | \(Report.time(onPageTime)) (\(ratio(onPageTime))) |"
            + "\n| a node hides or shows: the listing without it (`Menu.hiding`, a group of \(menu.subtreeEnd(group) - group - 1) nodes) | \(Report.time(hidingTime)) |"
            + "\n| the same: the listing served (`MenuAPI.install`, as a reload) | \(Report.time(installTime)) |"
            + "\n| resident memory per unavailable node (110,000 against 10,000, a 13-byte reason) | \(Int(perNode.rounded())) B |"
    }
}
