import Foundation
import Testing

@testable import MenuModel

/// Attribute numbers keep the text the config wrote: a number that does not fit `Int64`, or has
/// a fraction or an exponent, is not rewritten as the nearest `Double`.
@Suite struct AttributeNumberTests {
    func attribute(_ text: String) throws -> JSONValue? {
        let menu = try Menu(
            jsonData: Data(#"{"items": [{"id": "r", "title": "R", "attributes": {"v": \#(text)}}]}"#.utf8))
        return menu.attributes(of: 1)?["v"]
    }

    @Test(arguments: [
        "18446744073709551615", "-9223372036854775809", "1.10", "1e3", "1E+3", "2.50e-7", "-0", "-0.0", "0.1", "12.5",
        "1e300"
    ])
    func aNumberThatIsNoInt64KeepsItsText(text: String) throws {
        #expect(try attribute(text) == .number(JSONNumber(text: text)!))
        guard case .number(let number)? = try attribute(text) else { return }
        #expect(number.text == text)
    }

    @Test(arguments: ["0", "38", "-7", "9223372036854775807", "-9223372036854775808"])
    func anInt64StaysAnInteger(text: String) throws {
        #expect(try attribute(text) == .integer(Int64(text)!))
    }

    @Test func numbersInsideArraysAndObjectsKeepTheirTextToo() throws {
        #expect(
            try attribute(#"[1.10, {"k": 18446744073709551615}]"#)
                == .array([
                    .number(JSONNumber(text: "1.10")!),
                    .object(["k": .number(JSONNumber(text: "18446744073709551615")!)])
                ]))
    }

    /// Overflow and underflow are refused alike: neither 123123e100000 (infinity) nor
    /// 123e-10000000 (zero) silently becomes another number.
    @Test(arguments: ["1e400", "123123e100000", "-1e400", "1e-400", "123e-10000000", "-2.5e-400", "0.000001e-330"])
    func aNumberOutsideDoublesRangeIsRefused(text: String) {
        #expect(
            configProblems(#"{"items": [{"id": "r", "title": "R", "attributes": {"v": \#(text)}}]}"#).map(\.value) == [
                "number out of range"
            ])
        #expect(JSONNumber(text: text) == nil)
    }

    @Test(arguments: ["0e-400", "-0.0e-99999", "0.000e5", "5e-324", "2.2250738585072014e-308"])
    func zeroAsWrittenAndSubnormalsAreInRange(text: String) throws {
        #expect(try attribute(text) == .number(JSONNumber(text: text)!))
    }

    @Test(arguments: ["", "-", "01", "1.", ".5", "1e", "+1", "0x10", "1e400", "NaN", "1 ", "١"])
    func onlyJSONNumberTextMakesAJSONNumber(text: String) {
        #expect(JSONNumber(text: text) == nil)
    }

    @Test func aNumberFromADoubleIsItsShortestText() {
        #expect(JSONNumber(12.5).text == "12.5")
        #expect(JSONNumber(1e300).text == "1e+300")
        #expect(JSONNumber(text: "1.10")!.doubleValue == 1.1)
        #expect(JSONNumber(text: "1.10") != JSONNumber(text: "1.1"))
    }
}
