// Where the tests find the repository's files and the built `menu-server` executable.

import Foundation

package enum LivePaths {
    /// The package root, found from this file's location (Sources/MenuTestSupport/TestPaths.swift).
    package static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // MenuTestSupport
        .deletingLastPathComponent()  // Sources
        .deletingLastPathComponent()  // package root

    /// The tests' own menu, Tests/Fixtures/sichuan-menu.json: the Sichuan restaurant menu as
    /// Config/menu.json shipped it when the tests were written (30 rows shown by default, 24 of
    /// them leaves), frozen so that the demo menu in Config/ may change without the tests.
    package static let menuConfig: String = packageRoot.appendingPathComponent("Tests/Fixtures/sichuan-menu.json").path

    /// The same menu with its titles in zh-Hant (the default), zh-Hans and en
    /// (Tests/Fixtures/sichuan-menu-localized.json): the same ids, groups and counts.
    package static let localizedMenuConfig: String = packageRoot.appendingPathComponent(
        "Tests/Fixtures/sichuan-menu-localized.json"
    ).path

    /// The `menu-server` executable that `swift build` / `swift test` put next to the test bundle.
    /// Looks in the directory of the running test binary (and a few parents, for macOS bundles),
    /// then in `.build/debug` of the package. Never builds anything.
    package static func executable() throws -> URL { try executable(named: "menu-server") }

    /// The built executable `name` (`menu-server`, `menu-admin`), found as ``executable()`` finds
    /// `menu-server`.
    package static func executable(named name: String) throws -> URL {
        var candidates: [URL] = []
        var directories: [URL] = []
        if let first = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        if let main = Bundle.main.executableURL {
            directories.append(main.deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL)
        for directory in directories {
            var current = directory.standardizedFileURL
            for _ in 0 ..< 4 {
                candidates.append(current.appendingPathComponent(name))
                current = current.deletingLastPathComponent()
            }
        }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/\(name)"))
        for candidate in candidates {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
                !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
        }
        throw LiveError(
            "\(name) executable not found (run `swift build` first); looked at "
                + candidates.map(\.path).joined(separator: ", "))
    }
}

package struct LiveError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

package let repositoryRoot = LivePaths.packageRoot
