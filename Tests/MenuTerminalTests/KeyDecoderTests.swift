// The bytes a terminal sends in raw mode, decoded to keys: xterm's CSI and SS3 forms, sequences
// split across reads, a lone ESC, UTF-8 text typed through an input method.

import MenuTerminal
import Testing

extension TerminalTests {
    @Suite("Keys from terminal bytes")
    struct KeyDecoderTests {
        private func keys(_ text: String) -> [Key] {
            var decoder = KeyDecoder()
            return decoder.feed(Array(text.utf8))
        }

        @Test func arrowsHomeEndAndPagesDecodeInTheirCSIAndSS3Forms() {
            #expect(keys("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D") == [.up, .down, .right, .left])
            #expect(keys("\u{1B}OA\u{1B}OB\u{1B}OH\u{1B}OF") == [.up, .down, .home, .end])
            #expect(
                keys("\u{1B}[H\u{1B}[F\u{1B}[1~\u{1B}[4~\u{1B}[7~\u{1B}[8~") == [.home, .end, .home, .end, .home, .end])
            #expect(keys("\u{1B}[5~\u{1B}[6~") == [.pageUp, .pageDown])
            #expect(keys("\u{1B}[1;5A") == [.up])  // Ctrl-Up: the modifier is ignored
        }

        @Test func enterBackspaceAndControlKeysDecode() {
            #expect(keys("\r\n\u{7F}\u{08}\t") == [.enter, .enter, .backspace, .backspace, .tab])
            #expect(keys("\u{03}\u{0C}") == [.ctrl("c"), .ctrl("l")])
        }

        @Test func unknownSequencesAreDroppedWholeAndTheNextKeyStillDecodes() {
            #expect(keys("\u{1B}[99~q") == [.character("q")])
            #expect(keys("\u{1B}[200~x") == [.character("x")])
        }

        @Test func aSequenceSplitAcrossReadsWaitsForItsRest() {
            var decoder = KeyDecoder()
            #expect(decoder.feed([0x1B]) == [])
            #expect(decoder.feed(Array("[".utf8)) == [])
            #expect(decoder.feed(Array("6".utf8)) == [])
            #expect(decoder.feed(Array("~j".utf8)) == [.pageDown, .character("j")])
            #expect(decoder.pending.isEmpty)
        }

        @Test func aLoneEscapeIsEscapeOnlyOnFlush() {
            var decoder = KeyDecoder()
            #expect(decoder.feed([0x1B]) == [])
            #expect(decoder.flush() == [.escape])
            #expect(decoder.feed(Array("\u{1B}q".utf8)) == [.escape, .character("q")])
        }

        @Test func cjkTextSplitInsideACharacterDecodesWhole() {
            var decoder = KeyDecoder()
            let bytes = Array("麻婆".utf8)  // 3 bytes each
            #expect(decoder.feed(bytes[0 ..< 2]) == [])
            #expect(decoder.feed(bytes[2 ..< 4]) == [.character("麻")])
            #expect(decoder.feed(bytes[4...]) == [.character("婆")])
        }

        @Test func invalidUTF8IsSkippedNotFatal() {
            #expect(keys(String(decoding: [0x80, 0x61], as: UTF8.self)).contains(.character("a")))
            var decoder = KeyDecoder()
            #expect(decoder.feed([0xC3, 0x28, 0x62]) == [.character("("), .character("b")])
        }
    }
}
