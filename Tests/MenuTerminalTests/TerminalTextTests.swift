// What the client shows of text it did not write (titles, error messages, error bodies, search
// paths, messages on stderr): every character that a terminal would obey, or that reorders what
// follows it, is shown as characters instead.

import MenuTerminal
import Testing

extension TerminalTests {
    @Suite("Terminal text")
    struct TerminalTextTests {
        @Test func textWithoutControlsIsShownAsItIs() {
            for text in ["宮保雞丁", "Kung Pao Chicken  ¥38", "👩‍🍳 e\u{301}", "<U+202E> is only text", "␛[41m", ""] {
                #expect(TerminalText(text).string == text)
            }
        }

        @Test func anEscapeSequenceIsShownWholeWithItsEscapeAsASymbol() {
            #expect(TerminalText("\u{1B}]0;pwned\u{7}").string == "␛]0;pwned␇")  // OSC: the window title
            #expect(TerminalText("\u{1B}[41mred\u{1B}[0m").string == "␛[41mred␛[0m")  // CSI: a background colour
            #expect(TerminalText("\u{1B}P+q544e\u{1B}\\").string == "␛P+q544e␛\\")  // DCS, ended by ST
            #expect(TerminalText("\u{1B}[?1049l\u{1B}[2J\u{1B}c").string == "␛[?1049l␛[2J␛c")
        }

        @Test func everyC0ControlShowsAsItsControlPictureAndDeleteAsItsSymbol() {
            #expect(TerminalText("a\tb\nc\rd\u{0}e\u{8}f").string == "a␉b␊c␍d␀e␈f")
            #expect(TerminalText("\u{7F}").string == "␡")
            for value in UInt32(0) ..< 0x20 {
                #expect(TerminalText(String(Unicode.Scalar(value)!)).string == String(Unicode.Scalar(0x2400 + value)!))
            }
        }

        @Test func c1ControlsShowAsTheirCodePoints() {
            #expect(TerminalText("\u{9B}31mred").string == "<U+009B>31mred")  // 8-bit CSI
            #expect(TerminalText("\u{9D}0;pwned\u{9C}").string == "<U+009D>0;pwned<U+009C>")  // 8-bit OSC ended by ST
            #expect(TerminalText("a\u{85}b\u{80}\u{9F}").string == "a<U+0085>b<U+0080><U+009F>")
        }

        @Test func bidirectionalControlsShowAsTheirCodePoints() {
            #expect(TerminalText("txt.\u{202E}exe").string == "txt.<U+202E>exe")
            let controls: [UInt32] = [
                0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068,
                0x2069
            ]
            for value in controls {
                let hex = String(value, radix: 16, uppercase: true)
                #expect(
                    TerminalText("a" + String(Unicode.Scalar(value)!) + "b").string
                        == "a<U+\(hex.count < 4 ? "0" : "")\(hex)>b")
            }
        }

        @Test func bytesThatAreNotUTF8ArriveAsReplacementCharactersNotAsControls() {
            // A raw C1 CSI byte and an invalid byte in a body, decoded as MenuClient decodes every body.
            let body: [UInt8] = [0x41, 0x9B, 0x33, 0x31, 0x6D, 0xFF, 0xC3]
            #expect(TerminalText(String(decoding: body, as: UTF8.self)).string == "A\u{FFFD}31m\u{FFFD}\u{FFFD}")
        }

        @Test func noScalarOfTheBasicPlaneSurvivesAsAControlAndSanitizingTwiceChangesNothing() {
            for value in UInt32(0) ..< 0x10000 {
                guard let scalar = Unicode.Scalar(value) else { continue }  // surrogates
                let shown = TerminalText("x" + String(scalar) + "y")
                #expect(!shown.string.unicodeScalars.contains { Self.isControl($0) }, "U+\(String(value, radix: 16))")
                #expect(TerminalText(shown.string) == shown)
            }
        }

        @Test func whatIsShownIsMeasuredAsTheTerminalDrawsIt() {
            #expect(DisplayWidth.of(TerminalText("\u{1B}[2J").string) == 4)
            #expect(DisplayWidth.of(TerminalText("\u{202E}").string) == 8)
            #expect(DisplayWidth.of(TerminalText("宮\u{7}").string) == 3)
        }

        @Test func aSpanIsMadeOfSanitizedTextSoThePainterWritesNoEscapeButItsOwn() {
            #expect(Span("\u{1B}]0;pwned\u{7}", .error).text.string == "␛]0;pwned␇")
            var painter = FramePainter()
            let output = painter.paint(
                Frame(
                    lines: [ScreenLine([Span("\u{1B}]0;pwned\u{7}\u{1B}[41m\u{9B}2J\u{202E}", .error)])],
                    scrolling: 0 ..< 0))
            #expect(!output.contains("\u{1B}]"))
            #expect(!output.contains("\u{1B}[41m"))
            #expect(!output.unicodeScalars.contains { $0.value == 0x07 || $0.value == 0x9B || $0.value == 0x202E })
            #expect(output.contains("␛]0;pwned␇␛[41m<U+009B>2J<U+202E>"))
        }

        /// The scalars a terminal obeys or that reorder the text after them.
        static func isControl(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x00 ..< 0x20, 0x7F ..< 0xA0, 0x061C, 0x200E, 0x200F, 0x2028 ... 0x202E, 0x2066 ... 0x2069: true
            default: false
            }
        }
    }
}
