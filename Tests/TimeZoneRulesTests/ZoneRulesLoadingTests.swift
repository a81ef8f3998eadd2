import Foundation
import Testing
import TimeZoneRules

/// Zone names checked before any path is built, files that are missing, unreadable or hostile
/// rejected with the case that says why, and a directory chosen in place of /usr/share/zoneinfo.
struct ZoneRulesLoadingTests {
    static let paris =
        FileManager.default.contents(atPath: "/usr/share/zoneinfo/Europe/Paris").map { [UInt8]($0) } ?? []

    @Test(arguments: [
        "../etc/passwd", "/etc/passwd", "Europe//Paris", "", String(repeating: "A", count: 65), "Europe/Paris/",
        "Europe/Pa ris", "Europe/Paris\0", "Europe/París", "..", "Europe/../../etc/passwd", "Europe\\Paris"
    ])
    func anInvalidNameIsRefusedBeforeAnyFileIsOpened(name: String) {
        #expect(throws: ZoneRulesError.invalidName(name)) {
            try ZoneRules.load(named: name, directory: "/usr/share/zoneinfo")
        }
        #expect(ZoneRulesError.invalidName(name).description.contains("Europe/Paris"))
    }

    @Test(arguments: ["Europe/Atlantis", "Europe/Paris/Louvre", String(repeating: "A", count: 64), "Etc/GMT+5-x"])
    func aMissingZoneIsNotFound(name: String) {
        #expect(throws: ZoneRulesError.notFound(name: name, directory: "/usr/share/zoneinfo")) {
            try ZoneRules.load(named: name, directory: "/usr/share/zoneinfo")
        }
        let message = ZoneRulesError.notFound(name: name, directory: "/usr/share/zoneinfo").description
        #expect(message.contains("tzdata") && message.contains("TZDIR"))
    }

    @Test func aDirectoryIsUnreadable() {
        #expect(throws: ZoneRulesError.unreadable(path: "/usr/share/zoneinfo/Europe", reason: "Is a directory")) {
            try ZoneRules.load(named: "Europe", directory: "/usr/share/zoneinfo")
        }
    }

    @Test func hostileBytesAreMalformed() throws {
        let paris = try #require(Self.paris.count > 100 ? Self.paris : nil)
        var badMagic = paris
        badMagic[2] = UInt8(ascii: "x")
        var countsPastTheEnd = paris
        countsPastTheEnd.replaceSubrange(32 ..< 36, with: [0xFF, 0xFF, 0xFF, 0xFF])  // v1 timecnt
        var secondCounts = paris
        let second = 44 + v1BlockSize(paris)
        secondCounts.replaceSubrange(second + 36 ..< second + 40, with: [0x7F, 0xFF, 0xFF, 0xFF])  // v2 typecnt
        var badVersion = paris
        badVersion[4] = UInt8(ascii: "9")
        let cases: [(String, [UInt8])] = [
            ("empty", []), ("truncated", Array(paris.prefix(30))), ("bad magic", badMagic),
            ("counts past the end", countsPastTheEnd), ("v2 counts past the end", secondCounts),
            ("version 9", badVersion),
            ("no footer", Array(paris.dropLast())),
            ("descending times", tzif(footer: "", offsets: [0, 1], transitions: [(9, 1), (8, 0)])),
            ("type out of range", tzif(footer: "", offsets: [0], transitions: [(9, 1)])),
            ("no types", tzif(footer: "", offsets: []))
        ]
        for (what, bytes) in cases {
            do {
                _ = try ZoneRules(tzif: bytes, name: "Europe/Paris")
                Issue.record("\(what) was accepted")
            } catch {
                if case .malformed(name: "Europe/Paris", let detail) = error {
                    #expect(!detail.isEmpty && error.description.contains("tzdata"), "\(what)")
                } else {
                    Issue.record("\(what): \(error)")
                }
            }
        }
    }

    /// Every prefix of a real file (a v2+ file is complete only with its footer's last newline).
    @Test func everyTruncationOfARealFileIsMalformedAndNeverTraps() throws {
        let paris = try #require(Self.paris.count > 100 ? Self.paris : nil)
        for length in 0 ..< paris.count {
            #expect(throws: ZoneRulesError.self) {
                try ZoneRules(tzif: Array(paris.prefix(length)), name: "Europe/Paris")
            }
        }
        #expect(
            try ZoneRules(tzif: paris, name: "Europe/Paris")
                == ZoneRules.load(named: "Europe/Paris", directory: "/usr/share/zoneinfo"))
    }

    /// Each byte of a real file replaced in turn by 0x00, 0x7F and 0xFF: accepted or refused, never a trap.
    @Test func everyCorruptedByteIsAcceptedOrRefusedWithoutTrapping() throws {
        let paris = try #require(Self.paris.count > 100 ? Self.paris : nil)
        var refused = 0
        for index in paris.indices {
            for value: UInt8 in [0x00, 0x7F, 0xFF] {
                var bytes = paris
                bytes[index] = value
                do {
                    let rules = try ZoneRules(tzif: bytes, name: "Europe/Paris")
                    _ = (rules.offset(at: 0), rules.nextTransition(after: 2_000_000_000), rules.offset(at: .max))
                } catch { refused += 1 }
            }
        }
        #expect(refused > 0)
    }

    @Test func anotherDirectoryIsReadInPlaceOfTheDefault() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("zoneinfo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("Test"), withIntermediateDirectories: true)
        try Data(Self.paris).write(to: directory.appendingPathComponent("Test/Zone"))
        let expected = try ZoneRules(tzif: Self.paris, name: "Test/Zone")
        #expect(try ZoneRules.load(named: "Test/Zone", directory: directory.path) == expected)
        #expect(try ZoneRules.load(named: "Test/Zone", directory: directory.path + "/") == expected)
        #expect(throws: ZoneRulesError.notFound(name: "Europe/Paris", directory: directory.path)) {
            try ZoneRules.load(named: "Europe/Paris", directory: directory.path)
        }
        let variable = ProcessInfo.processInfo.environment["TZDIR"] ?? ""
        #expect(ZoneRules.defaultDirectory == (variable.isEmpty ? "/usr/share/zoneinfo" : variable))
    }

    private func v1BlockSize(_ bytes: [UInt8]) -> Int {
        let count = { (at: Int) in bytes[at ..< at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return count(32) * 5 + count(36) * 6 + count(40) + count(28) * 8 + count(24) + count(20)
    }
}
