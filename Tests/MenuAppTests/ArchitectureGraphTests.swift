// docs/architecture.md's target graph is generated from Package.swift by scripts/architecture-graph;
// this test runs the script's --check, so a target, dependency or product changed in the package
// without regenerating the document (`scripts/architecture-graph --write`) fails the suite.

import ChildProcess
import Foundation
import MenuTestSupport
import Testing

@Suite struct ArchitectureGraphTests {
    @Test func theDocumentedTargetGraphIsThePackages() throws {
        let script = LivePaths.packageRoot.appendingPathComponent("scripts/architecture-graph").path
        let outcome = try ChildProcess.run(
            executable: script, arguments: ["--check"], workingDirectory: LivePaths.packageRoot.path,
            timeout: .seconds(280))
        let messages = String(decoding: outcome.standardError, as: UTF8.self)
        #expect(
            outcome.exitedOnItsOwn,
            "scripts/architecture-graph --check did not finish within 280 s (it compiles the manifest)")
        #expect(outcome.termination == .exited(0), "\(messages)")
    }
}
