import Foundation

/// The client's messages on standard error, which is the terminal too when a person runs it: each
/// line a ``TerminalText``, so a server's answer quoted in one ("cannot open the menu at …: the
/// server answered …") cannot drive the terminal any more than it can on the screen.
public enum StandardError {
    /// Writes each of `lines` followed by a newline.
    public static func write(_ lines: TerminalText...) { write(lines: lines) }

    public static func write(lines: [TerminalText]) {
        FileHandle.standardError.write(Data(lines.map { $0.string + "\n" }.joined().utf8))
    }
}
