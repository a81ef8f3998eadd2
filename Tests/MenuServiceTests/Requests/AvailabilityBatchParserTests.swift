import MenuAvailability
import Testing

@testable import MenuService

@Suite("The availability batch body: strict, every wrong value named by its path")
struct AvailabilityBatchParserTests {
    @Test func aBatchReadsInOrderWithOptionalUntilAndReason() throws {
        let changes = try AvailabilityBatchParser.parse(
            Array(
                #"""
                {"changes": [
                  {"id": "fish", "state": "sold_out", "until": "2026-12-06T20:30:00+01:00", "reason": "back at 19:30 \u2014 sorry"},
                  {"state": "paused", "id": "breakfast", "until": null, "reason": null},
                  {"id": "tea", "state": "available"}
                ]}
                """#.utf8))
        #expect(
            changes == [
                .init(
                    id: "fish",
                    Availability(
                        state: .soldOut, until: try Timestamp(rfc3339: "2026-12-06T19:30:00Z"),
                        reason: "back at 19:30 — sorry")),
                .init(id: "breakfast", Availability(state: .paused)),
                .init(id: "tea", Availability(state: .available))
            ])
        #expect(try AvailabilityBatchParser.parse(Array(#"{"changes":[]}"#.utf8)).isEmpty)
    }

    @Test(arguments: [
        ("", AvailabilityBatchParser.Problem.empty),
        ("{", .notJSON(offset: 1)),
        (#"{"changes":[],"changes":[]}"#, .duplicateKey("changes")),
        (#"{"changes":[{"id":"a","id":"b","state":"paused"}]}"#, .duplicateKey("id")),
        ("[]", .notAnObject(path: "the body")),
        (#"{}"#, .missingKey("changes", path: "the body")),
        (#"{"change":[]}"#, .unknownKey("change", path: "the body")),
        (#"{"changes":{}}"#, .notAnArray(path: "changes")),
        (#"{"changes":[1]}"#, .notAnObject(path: "changes[0]")),
        (#"{"changes":[{"id":"a","state":"paused"},{"state":"paused"}]}"#, .missingKey("id", path: "changes[1]")),
        (#"{"changes":[{"id":"a"}]}"#, .missingKey("state", path: "changes[0]")),
        (#"{"changes":[{"id":"a b","state":"paused"}]}"#, .invalidID(path: "changes[0].id", found: "a b")),
        (#"{"changes":[{"id":7,"state":"paused"}]}"#, .notAString(path: "changes[0].id")),
        (#"{"changes":[{"id":"a","state":"gone"}]}"#, .invalidState(path: "changes[0].state", found: "gone")),
        // closed comes from the menu's opening hours, never from a batch.
        (#"{"changes":[{"id":"a","state":"closed"}]}"#, .invalidState(path: "changes[0].state", found: "closed")),
        (#"{"changes":[{"id":"a","state":"paused","untill":"x"}]}"#, .unknownKey("untill", path: "changes[0]")),
        (
            #"{"changes":[{"id":"a","state":"paused","reason":"\u001b[2J"}]}"#,
            .invalidReason(path: "changes[0].reason", reason: "has a control character")
        )
    ])
    func aWrongBodyIsRefusedNamingWhatIsWrong(body: String, problem: AvailabilityBatchParser.Problem) {
        #expect(throws: problem) { try AvailabilityBatchParser.parse(Array(body.utf8)) }
    }

    @Test func anUntilThatIsNotRFC3339AndAReasonTooLongAreNamed() {
        #expect {
            try AvailabilityBatchParser.parse(Array(#"{"changes":[{"id":"a","state":"paused","until":"19:30"}]}"#.utf8))
        } throws: { error in
            guard case .invalidUntil(let path, let reason) = error as? AvailabilityBatchParser.Problem else {
                return false
            }
            return path == "changes[0].until" && reason.contains("RFC 3339")
        }
        let long = String(repeating: "é", count: 101)
        #expect(
            throws: AvailabilityBatchParser.Problem.invalidReason(
                path: "changes[0].reason", reason: "is 202 bytes; at most 200")
        ) {
            try AvailabilityBatchParser.parse(
                Array(#"{"changes":[{"id":"a","state":"paused","reason":"\#(long)"}]}"#.utf8))
        }
    }
}
