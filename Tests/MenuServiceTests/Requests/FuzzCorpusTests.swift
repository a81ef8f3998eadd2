import Foundation
import HTTPCore
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
}
