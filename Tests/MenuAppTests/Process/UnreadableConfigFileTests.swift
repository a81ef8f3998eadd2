import Foundation
import MenuAppTestSupport
import MenuServiceTestSupport
import MenuTestSupport
import Testing

extension AppTests {
    /// The executable refuses a config file it cannot read in one plain line, with exit code 2.
    @Suite("Startup: an unreadable menu config")
    struct UnreadableConfigFileTests {
        enum Place: Sendable, CaseIterable { case missing, directory, underAFile }

        @Test(arguments: Place.allCases)
        func theExecutableSaysWhyInOneLine(place: Place) throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "menu-unreadable-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("menu.json")
            let (path, reason): (String, String)
            switch place {
            case .missing: (path, reason) = (file.path, "no such file")
            case .directory: (path, reason) = (directory.path, "it is a directory; give the menu's JSON file")
            case .underAFile:
                try Data("{}".utf8).write(to: file)
                (path, reason) = (file.path + "/menu.json", "a part of the path is not a directory")
            }
            let exit = try liveRun(try LivePaths.executable(), ["--port", "0", "--config", path])
            #expect(exit.exited && exit.status == 2, "\(exit.termination)")
            #expect(exit.stdout.isEmpty)
            #expect(exit.stderr == "menu-server: cannot read \(path): \(reason)\n")
        }
    }
}
