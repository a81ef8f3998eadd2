import Foundation
import Testing

@testable import MenuModel

/// A config file that cannot be read is refused in plain words: `cannot read FILE: REASON`.
@Suite struct UnreadableConfigTests {
    func message(loading path: String) -> String {
        do {
            _ = try Menu(contentsOfFile: path)
            return "loaded"
        } catch {
            return error.problems.map(\.description).joined(separator: "\n")
        }
    }

    @Test func aMissingFileSaysNoSuchFile() {
        #expect(message(loading: "/nonexistent/menu.json") == "cannot read /nonexistent/menu.json: no such file")
    }

    @Test func aDirectorySaysItIsOne() {
        let directory = FileManager.default.temporaryDirectory.path
        #expect(message(loading: directory) == "cannot read \(directory): it is a directory; give the menu's JSON file")
    }

    @Test func aFileUsedAsADirectorySaysSo() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("menu-\(UUID().uuidString).json")
        try Data("{}".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(
            message(loading: file.path + "/menu.json")
                == "cannot read \(file.path)/menu.json: a part of the path is not a directory")
    }

    @Test func aPathTooLongSaysSo() {
        let path = "/tmp/" + String(repeating: "a", count: 5_000)
        #expect(message(loading: path) == "cannot read \(path): the path is too long")
    }

    @Test func aFileWithoutReadPermissionSaysPermissionDenied() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("menu-\(UUID().uuidString).json")
        try Data("{}".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: file.path)
        // root reads any file: then only the wording of the system's answer is checked.
        if getuid() != 0 { #expect(message(loading: file.path) == "cannot read \(file.path): permission denied") }
        let denied = CocoaError(.fileReadNoPermission, userInfo: [NSUnderlyingErrorKey: POSIXError(.EACCES)])
        #expect(Menu.reason(denied) == "permission denied")
    }

    @Test func anotherSystemErrorIsItsOwnWords() {
        #expect(
            Menu.reason(CocoaError(.fileReadUnknown, userInfo: [NSUnderlyingErrorKey: POSIXError(.EMFILE)]))
                == "too many open files")
    }
}
