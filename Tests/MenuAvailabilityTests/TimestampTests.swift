import Foundation
import MenuAvailability
import NaiveReference
import Testing

@Suite("Timestamp: strict RFC 3339 in and out")
struct TimestampTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", Int64(0)),
        ("2000-01-01T00:00:00Z", 946_684_800_000),
        ("2000-01-01T01:00:00+01:00", 946_684_800_000),
        ("1999-12-31T19:00:00-05:00", 946_684_800_000),
        ("2000-01-01t00:00:00z", 946_684_800_000),
        ("2000-01-01 00:00:00Z", 946_684_800_000),
        ("2000-01-01T00:00:00.5Z", 946_684_800_500),
        ("2000-01-01T00:00:00.123456789Z", 946_684_800_123),
        ("2024-02-29T12:00:00Z", 1_709_208_000_000),
        ("2016-12-31T23:59:60Z", 1_483_228_800_000),
        ("1969-12-31T23:59:59.999Z", -1)
    ])
    func knownInstants(text: String, milliseconds: Int64) throws {
        #expect(try Timestamp(rfc3339: text).milliseconds == milliseconds)
    }

    @Test(arguments: [
        "", "2000-01-01", "2000-01-01T00:00Z", "2000-01-01T00:00:00", "2000-13-01T00:00:00Z",
        "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2000-04-31T00:00:00Z", "2000-01-01T24:00:00Z",
        "2000-01-01T00:60:00Z", "2000-01-01T00:00:61Z", "2000-01-01T00:00:00+24:00", "2000-01-01T00:00:00+0100",
        "2000-01-01T00:00:00.Z", "2000-01-01T00:00:00.1234567890Z", "2000-01-01T00:00:00Zx", "0000-01-01T00:00:00Z",
        "20000-01-01T00:00:00Z", "2000-1-01T00:00:00Z", "0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01",
        "２０００-01-01T00:00:00Z", String(repeating: "9", count: 41)
    ])
    func malformedTextIsRefusedWithAReason(text: String) {
        #expect(throws: Timestamp.Malformed.self) { try Timestamp(rfc3339: text) }
    }

    @Test func writtenInUTCAndReadBackToTheMillisecondAgreeingWithFoundation() throws {
        var rng = SplitMix64(state: 0x27_02)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for _ in 0 ..< 2000 {
            let instant = Timestamp(
                milliseconds: Int64.random(in: Timestamp.range, using: &rng))
            let text = instant.rfc3339
            #expect(try Timestamp(rfc3339: text) == instant, "\(text)")
            // Foundation's calendar is Julian before October 1582; RFC 3339's is Gregorian throughout.
            guard instant.milliseconds >= -12_212_553_600_000 else { continue }
            if let date = formatter.date(
                from: text.contains(".") ? text : text.replacingOccurrences(of: "Z", with: ".000Z"))
            {
                #expect(Int64((date.timeIntervalSince1970 * 1000).rounded()) == instant.milliseconds, "\(text)")
            }
        }
        #expect(Timestamp(milliseconds: 946_684_800_250).rfc3339 == "2000-01-01T00:00:00.250Z")
        #expect(Timestamp(milliseconds: 0).rfc3339 == "1970-01-01T00:00:00Z")
    }
}
