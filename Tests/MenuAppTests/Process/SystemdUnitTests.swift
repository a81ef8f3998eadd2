// Config/menu-server.service, the systemd unit example: `systemd-analyze verify` accepts it with
// no warning (an unknown or misspelt key, a missing executable, a bad value are all reported),
// and its sandbox scores as systemd's own "OK" or better offline. The unit's ExecStart is pointed
// at the built executable for the check, which needs the file to exist.

import ChildProcess
import Foundation
import MenuTestSupport
import Testing

extension AppTests {
    @Suite("The systemd unit example: verified and sandboxed")
    struct SystemdUnitTests {
        static let unitPath = LivePaths.packageRoot.appendingPathComponent("Config/menu-server.service").path
        static let systemdAnalyze = "/usr/bin/systemd-analyze"

        /// The unit with ExecStart on the built executable, in a fresh directory; its path.
        private func unitForTheBuiltExecutable() throws -> String {
            let text = try String(contentsOfFile: Self.unitPath, encoding: .utf8)
            #expect(text.contains("ExecStart=/usr/local/bin/menu-server "))
            let local = text.replacingOccurrences(
                of: "ExecStart=/usr/local/bin/menu-server ", with: "ExecStart=\(try LivePaths.executable().path) ")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "menu-unit-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("menu-server.service").path
            try local.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        private func analyze(_ arguments: [String]) throws -> ChildProcess.Outcome {
            try ChildProcess.run(executable: Self.systemdAnalyze, arguments: arguments, timeout: .seconds(60))
        }

        @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: systemdAnalyze)))
        func systemdAnalyzeVerifiesItWithoutAWarning() throws {
            let unit = try unitForTheBuiltExecutable()
            let verified = try analyze(["verify", unit])
            #expect(verified.termination == .exited(0))
            #expect(
                verified.standardError.isEmpty && verified.standardOutput.isEmpty,
                "\(String(decoding: verified.standardError + verified.standardOutput, as: UTF8.self))")
            // The check can fail: a misspelt key is reported.
            let misspelt = unit + ".typo.service"
            try (try String(contentsOfFile: unit, encoding: .utf8)).replacingOccurrences(
                of: "DynamicUser=", with: "DynamicUsr="
            )
            .write(toFile: misspelt, atomically: true, encoding: .utf8)
            #expect(!(try analyze(["verify", misspelt])).standardError.isEmpty)
        }

        @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: systemdAnalyze)))
        func itsSandboxScoresOKAndKeepsWhatTheServerNeeds() throws {
            let unit = try unitForTheBuiltExecutable()
            // systemd's scale: 0 is fully sandboxed, 10 not at all; below 2 is "OK" and better.
            let security = try analyze(["security", "--offline=yes", "--threshold=19", unit])
            let report = String(decoding: security.standardOutput, as: UTF8.self)
            #expect(security.termination == .exited(0), "\(report)")
            let level = report.split(separator: "\n").last { $0.contains("Overall exposure level") }
            let score = level.flatMap { line in line.split(separator: " ").compactMap { Double($0) }.first }
            #expect(try #require(score) < 2, "\(level ?? "")")
            let text = try String(contentsOfFile: Self.unitPath, encoding: .utf8)
            for line in [
                "DynamicUser=yes", "ProtectSystem=strict", "StateDirectory=menu-server",
                "MENU_DATA_DIR=/var/lib/menu-server",
                "ExecReload=/bin/kill -HUP $MAINPID", "KillSignal=SIGTERM"
            ] {
                #expect(text.contains(line), "\(line)")
            }
        }
    }
}
