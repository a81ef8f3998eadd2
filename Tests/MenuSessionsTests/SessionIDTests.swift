import Testing

@testable import MenuSessions

@Suite struct SessionIDTests {
    @Test func textRoundTripsForRandomIDs() {
        for _ in 0 ..< 1_000 {
            let id = SessionID.random()
            #expect(id.text.utf8.count == 22)
            #expect(SessionID(id.text) == id)
        }
    }

    @Test func extremeBitPatternsRoundTrip() {
        for (high, low) in [(UInt64(0), UInt64(0)), (.max, .max), (1, 0), (0, 1), (0x8000_0000_0000_0000, 3)] {
            let id = SessionID(high: high, low: low)
            #expect(SessionID(id.text) == id)
        }
        #expect(SessionID(high: 0, low: 0).text == "AAAAAAAAAAAAAAAAAAAAAA")
        #expect(SessionID(high: .max, low: .max).text == "_____________________w")
    }

    /// The text, and its bytes, are the 128 bits read six at a time from the top through the
    /// base64url alphabet, four zero bits after the last two: written out bit by bit here.
    @Test func textIsTheBase64urlOfTheBitsFromTheTop() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var ids = (0 ..< 500).map { _ in SessionID.random() }
        ids += [SessionID(high: 0, low: 0), SessionID(high: .max, low: .max), SessionID(high: 1, low: 1 << 63)]
        for id in ids {
            let bits =
                (0 ..< 64).map { id.high >> (63 - $0) & 1 } + (0 ..< 64).map { id.low >> (63 - $0) & 1 } + [0, 0, 0, 0]
            let expected = String(
                stride(from: 0, to: 132, by: 6).map { start in
                    alphabet[Int(bits[start ..< start + 6].reduce(0) { $0 << 1 | $1 })]
                })
            #expect(id.text == expected)
            #expect(id.utf8 == Array(expected.utf8))
        }
    }

    @Test func idsThatDifferOnlyInTheirLowHalfAreStillTwoKeys() {
        // The hash reads `high` alone: ids equal there must still be told apart by ==.
        var sessions: [SessionID: Int] = [:]
        for low in 0 ..< 100 { sessions[SessionID(high: 7, low: UInt64(low))] = low }
        #expect(sessions.count == 100)
        #expect(sessions[SessionID(high: 7, low: 42)] == 42)
        #expect(sessions[SessionID(high: 8, low: 42)] == nil)
    }

    @Test func randomIDsOfOneShardAllFindTheirEntries() {
        // Ids of one shard share their low bits; a dictionary of them must still hold every one.
        var sessions: [SessionID: Int] = [:]
        var made: [SessionID] = []
        while made.count < 5_000 {
            let id = SessionID.random()
            guard SessionTable<InMemorySessionStore.Entry>.shardIndex(of: id) == 0 else { continue }
            sessions[id] = made.count
            made.append(id)
        }
        for (position, id) in made.enumerated() { #expect(sessions[id] == position) }
    }

    @Test func onlyTheURLSafeAlphabetIsUsed() {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect(SessionID.random().text.allSatisfy(allowed.contains))
    }

    @Test(arguments: [
        "", "AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAA+", "AAAAAAAAAAAAAAAAAAAAAB",
        "ÄAAAAAAAAAAAAAAAAAAAA"
    ])
    func nonCanonicalTextIsRefused(text: String) {
        #expect(SessionID(text) == nil)
    }
}
