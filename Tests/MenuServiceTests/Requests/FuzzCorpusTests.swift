import Foundation
import HTTPCore
import MenuAvailability
import MenuModel
import MenuTestSupport
import Testing

@testable import FuzzTargets

/// Every input in `Fuzz/corpus/TARGET/` (the seeds and every past finding, which is added there)
/// goes through the very check the fuzzer runs, `FuzzTarget.check`, as a regression test: no
/// crash and a well-formed outcome.
@Suite struct FuzzCorpusTests {
    static func corpus(_ target: FuzzTarget) throws -> [URL] {
        let directory = repositoryRoot.appendingPathComponent("Fuzz/corpus/\(target.rawValue)")
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everyCorpusInputHasAWellFormedOutcome(target: FuzzTarget) throws {
        let files = try Self.corpus(target)
        #expect(!files.isEmpty, "Fuzz/corpus/\(target.rawValue) is empty")
        for file in files {
            let problem = target.check(Array(try Data(contentsOf: file)))
            #expect(problem == nil, "\(target.rawValue)/\(file.lastPathComponent): \(problem ?? "")")
        }
    }

    /// The check can fail: a request answered with a 5xx or a malformed error, or a body read
    /// differently from Foundation, is reported.
    @Test func theChecksReportABadOutcome() {
        #expect(
            FuzzTarget.checkAnswer(.init(status: 500, body: Array(#"{"error":{"code":"x","message":"y"}}"#.utf8)))
                != nil)
        #expect(FuzzTarget.checkAnswer(.init(status: 400, body: Array(#"{"error":{"code":"x"}}"#.utf8))) != nil)
        #expect(FuzzTarget.checkAnswer(.init(status: 200, body: Array("<html>".utf8))) != nil)
        #expect(
            FuzzTarget.checkAnswer(.init(status: 404, body: Array(#"{"error":{"code":"x","message":"y"}}"#.utf8)))
                == nil)
    }

    /// The hours checks can fail: a row shown open while its group's hours close it, or one closed
    /// that opens before the instant asked about; the corpus's Paris menu loads and has hours.
    @Test func theHoursChecksReportAWrongRow() throws {
        let saturdayNoon = try Timestamp(rfc3339: "2026-12-05T12:00:00Z")
        #expect(FuzzTarget.checkClosedRows([["id": "eggs"]], at: saturdayNoon) != nil)
        let closed: [String: Any] = ["id": "eggs", "availability": ["state": "closed", "until": "2026-12-05T11:00:00Z"]]
        #expect(FuzzTarget.checkClosedRows([closed], at: saturdayNoon) != nil)
        #expect(FuzzTarget.checkClosedRows([["id": "tea"]], at: saturdayNoon) == nil)
        let paris = try Data(contentsOf: repositoryRoot.appendingPathComponent("Fuzz/corpus/config/hours-paris.json"))
        let menu = try Menu(jsonData: paris)
        #expect(MenuHours(menu: menu) != nil)
        #expect(FuzzTarget.checkHours(of: menu, seed: Array(paris)) == nil)
    }
}
