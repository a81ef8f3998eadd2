import Foundation
import MenuModel
import MenuService
import MenuSessions

/// The session table's hot and cold paths at a given number of sessions: `POST /sessions`
/// answered 429 at a full table (every session too young to evict), and a read of a random
/// held session (`GET /rows` with `X-Session-Id` pays this lookup and its LRU touch).
enum FullTableFigures {
    /// One line per size: the cost of a refused create and of a read, at a full table of `size`.
    static func measure(sizes: [Int], plan: TimingPlan) -> String {
        var lines = ["| sessions held | refused create (429) | read of a held session |", "|---:|---:|---:|"]
        let menu = try! Menu(
            jsonData: Data(#"{"items":[{"id":"g","title":"G","items":[{"id":"r","title":"R"}]}]}"#.utf8))
        for size in sizes {
            // The count is the bound measured here: no byte budget in the way of a million sessions.
            let store = InMemorySessionStore(
                menu: menu, maxSessions: size, sessionMemory: SessionLimits.sessionMemoryRange.upperBound)
            var ids: [SessionID] = []
            ids.reserveCapacity(size)
            for _ in 0 ..< size { ids.append(try! store.create()) }
            // Random held ids in a fixed order, so the reads miss the caches as a real mix does.
            var generator = SystemRandomNumberGenerator()
            let sample = (0 ..< 65_536).map { _ in ids[Int.random(in: 0 ..< size, using: &generator)] }
            let refused = plan.nanosecondsPerOp { _ in
                do { return try store.create().text.utf8.count } catch { return 2 }
            }
            let read = plan.nanosecondsPerOp { index in
                (try? store.state(of: sample[index & 65_535]).changedGroupCount) ?? -1
            }
            lines.append("| \(size) | \(Report.time(refused)) | \(Report.time(read)) |")
        }
        return lines.joined(separator: "\n")
    }
}
