import AdminAccess
import Foundation
import Testing

/// Who may use the admin API: the `Authorization: Bearer` field read exactly, token files read
/// with their mistakes named by line (never by token), tokens matched by SHA-256 digest, and a
/// changed file taking over without a restart.
struct BearerCredentialsTests {
    @Test(arguments: [
        ("Bearer abcdefghijklmnop0123456789", "abcdefghijklmnop0123456789"),
        ("bearer   abc", "abc"),
        ("BEARER a+/b~c.d_e-f==", "a+/b~c.d_e-f=="),
        ("  Bearer token \t", "token")
    ])
    func aBearerTokenIsReadWhateverTheSchemesCaseAndTheSpaces(value: String, token: String) {
        #expect(BearerCredentials(authorization: value) == .token(Array(token.utf8)))
    }

    @Test(arguments: [
        "Basic s3cr3t", "Bearer", "Bearer ", "Bearers3cr3t", "Bearer\ts3cr3t", "Bearer s3cr3t=b", "Bearer =",
        "Bearer s3cr3t en", "Bearer s3cr3té", "Bearer s3cr3t" + String(repeating: "a", count: 513), "Bear s3cr3t"
    ])
    func anythingElseIsMalformed(value: String) {
        guard case .malformed(let reason) = BearerCredentials(authorization: value) else {
            Issue.record("\(value.prefix(40)) was read as \(BearerCredentials(authorization: value))")
            return
        }
        #expect(!reason.contains("s3cr3t"), "the reason never quotes the value")
    }

    @Test func noFieldIsMissing() {
        #expect(BearerCredentials(authorization: nil) == .missing)
    }
}

struct AdminTokensTests {
    private func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func theDigestIsSHA256AndTheFingerprintItsFirstSixBytes() {
        // FIPS 180-2's example: SHA-256("abc").
        let digest = TokenDigest(of: Array("abc".utf8))
        #expect(
            digest.bytes.map { String(format: "%02x", $0) }.joined()
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(digest.fingerprint == "sha256:ba7816bf8f01")
        #expect(digest.matches(TokenDigest(of: Array("abc".utf8))) && !digest.matches(TokenDigest(of: [])))
    }

    @Test func aFileOfTokensSkipsCommentsAndBlankLinesAndMatchesEachToken() throws {
        let path = try file("# rotated 2026-12\r\nabcdefghijklmnop0123456789\r\n\n  second-token-ABCDEFGH+/==  \n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tokens = try AdminTokens(path: path)
        #expect(tokens.tokens.map(\.line) == [2, 4])
        #expect(tokens.match(Array("abcdefghijklmnop0123456789".utf8))?.line == 2)
        #expect(tokens.match(Array("second-token-ABCDEFGH+/==".utf8))?.line == 4)
        #expect(tokens.match(Array("abcdefghijklmnop012345678".utf8)) == nil)
        #expect(tokens.match([]) == nil)
    }

    @Test func aBadFileIsRefusedNamingTheLineNeverTheToken() throws {
        let cases: [(String, AdminTokenFileError)] = [
            ("# only a comment\n\n", .noToken(path: "")),
            ("abcdefghijklmnop0123456789\nshort-secret\n", .invalidToken(path: "", line: 2, "")),
            ("abcdefghijklmnop0123456789\nnot a token at all!\n", .invalidToken(path: "", line: 2, "")),
            ("abcdefghijklmnop0123456789\nabcdefghijklmnop0123456789\n", .invalidToken(path: "", line: 2, ""))
        ]
        for (text, expected) in cases {
            let path = try file(text)
            defer { try? FileManager.default.removeItem(atPath: path) }
            do {
                _ = try AdminTokens(path: path)
                Issue.record("\(text) was accepted")
            } catch {
                switch (error, expected) {
                case (.noToken, .noToken): break
                case (.invalidToken(_, let line, _), .invalidToken(_, let expectedLine, _)):
                    #expect(line == expectedLine)
                default: Issue.record("\(text): \(error)")
                }
                #expect(!error.description.contains("secret") && !error.description.contains("abcdefgh"))
                #expect(error.description.contains(path))
            }
        }
        #expect(throws: AdminTokenFileError.self) { try AdminTokens(path: "/nonexistent/tokens") }
    }

    @Test func aChangedFileTakesOverAndABrokenOneKeepsTheTokensBefore() throws {
        let path = try file("old-token-0123456789\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tokens = try AdminTokens(path: path)
        #expect(tokens.refresh() == nil)
        // Rotation: the new token added beside the old one, then the old one removed.
        try Data("old-token-0123456789\nnew-token-0123456789\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(tokens.refresh() == nil)
        #expect(tokens.match(Array("new-token-0123456789".utf8)) != nil)
        try Data("new-token-0123456789\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(tokens.refresh() == nil)
        #expect(tokens.match(Array("old-token-0123456789".utf8)) == nil)
        // A broken file is reported once and changes nothing; so is a removed one.
        try Data("short\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(tokens.refresh() != nil)
        #expect(tokens.refresh() == nil, "reported once")
        #expect(tokens.match(Array("new-token-0123456789".utf8)) != nil)
        try FileManager.default.removeItem(atPath: path)
        #expect(tokens.refresh() != nil)
        #expect(tokens.match(Array("new-token-0123456789".utf8)) != nil)
    }
}
