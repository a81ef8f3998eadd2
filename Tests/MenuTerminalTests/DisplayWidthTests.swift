// Columns a title takes in a terminal: CJK is double width, combining marks take none.

import MenuTerminal
import Testing

extension TerminalTests {
    @Suite("Display width")
    struct DisplayWidthTests {
        @Test func cjkTitlesAreTwoColumnsACharacterAndLatinOne() {
            #expect(DisplayWidth.of("宮保雞丁") == 8)
            #expect(DisplayWidth.of("Kung Pao") == 8)
            #expect(DisplayWidth.of("瀘州老窖特曲 Luzhou") == 19)
            #expect(DisplayWidth.of("ｱ") == 1)  // halfwidth katakana
            #expect(DisplayWidth.of("Ａ１") == 4)  // fullwidth forms
            #expect(DisplayWidth.of("삼겹살") == 6)  // Hangul
            #expect(DisplayWidth.of("𠀋") == 2)  // CJK Extension B, outside the BMP
        }

        @Test func marksTheAppDrawsAreOneColumnAndEmojiTwo() {
            #expect(DisplayWidth.of("▾▸…¥€") == 5)
            #expect(DisplayWidth.of("🍜") == 2)
            #expect(DisplayWidth.of("👩‍🍳") == 2)  // a ZWJ sequence is one grapheme
        }

        @Test func combiningMarksAndJoinersTakeNoColumn() {
            #expect(DisplayWidth.of("e\u{301}") == 1)
            #expect(DisplayWidth.of("a\u{200B}b") == 2)
        }

        @Test func truncationNeverSplitsAWideCharacterAndFittingIsExact() {
            #expect(DisplayWidth.truncated("宮保雞丁", to: 8) == "宮保雞丁")
            #expect(DisplayWidth.truncated("宮保雞丁", to: 7) == "宮保雞…")
            #expect(DisplayWidth.truncated("宮保雞丁", to: 6) == "宮保…")  // 雞 would straddle: left out
            #expect(DisplayWidth.truncated("abc", to: 0) == "")
            for width in 0 ... 12 {
                #expect(DisplayWidth.of(DisplayWidth.fitted("瀘州老窖特曲", to: width)) == width)
            }
        }
    }
}
