import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the app's loop reacts to: keys typed, the window resized, a table event, a request to stop.
public enum TerminalInput: Sendable {
    case keys([Key])
    case resized
    /// Stop: `signal` is the signal that asked (SIGINT, SIGTERM, SIGHUP), nil at end of input.
    case quit(signal: Int32?)
}

/// The controlling terminal in raw mode on the alternate screen: reads keys, writes frames, and
/// puts everything back (mode, screen, cursor, wrapping) on ``restore()``, which SIGINT, SIGTERM,
/// SIGHUP and end of input lead to through ``inputs``.
///
/// Invariant: between ``init(input:output:)`` and ``restore()`` the terminal is in raw mode (no
/// echo, no line editing, no CR translation; signals from keys stay on so Ctrl-C is SIGINT) on
/// the alternate screen with the cursor hidden; ``restore()`` runs at most once. One instance,
/// set up and restored by the app's task (hence `@unchecked Sendable`: the reader thread and the
/// signal handlers touch only the descriptors and the stream, which are safe to share).
public final class Terminal: @unchecked Sendable {
    public let input: Int32
    public let output: Int32
    /// Keys, resizes and stop requests, in order; one consumer.
    public let inputs: AsyncStream<TerminalInput>
    private let sink: AsyncStream<TerminalInput>.Continuation
    private var saved = termios()
    private var restored = false
    private var signalSources: [any DispatchSourceSignal] = []

    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) throws(TerminalError) {
        self.input = input
        self.output = output
        (inputs, sink) = AsyncStream.makeStream(of: TerminalInput.self)
        guard isatty(input) == 1, tcgetattr(input, &saved) == 0 else { throw .notATerminal }
        var raw = saved
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR | IGNCR | BRKINT | INPCK | ISTRIP)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN)
        raw.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSAFLUSH, &raw) == 0 else { throw .cannotSetMode(errno: errno) }
        write(ANSI.enterAlternateScreen + ANSI.hideCursor + ANSI.autowrapOff + ANSI.clearScreen)
        // Ctrl-Z would stop the app with the terminal raw and on the alternate screen: ignored.
        signal(SIGTSTP, SIG_IGN)
        for (number, event) in [
            (SIGINT, TerminalInput.quit(signal: SIGINT)), (SIGTERM, .quit(signal: SIGTERM)),
            (SIGHUP, .quit(signal: SIGHUP)), (SIGWINCH, .resized)
        ] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [sink] in sink.yield(event) }
            source.resume()
            signalSources.append(source)
        }
        startReading()
    }

    /// Columns and lines of the window (80 × 24 when the terminal does not say).
    public var size: (width: Int, height: Int) {
        var window = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else {
            return (80, 24)
        }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// Writes `text` whole (retrying short writes and EINTR). Internal: what reaches the terminal
    /// is ``FramePainter``'s output (spans of ``TerminalText`` and its own escapes) and ``ANSI``'s.
    func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { systemWrite(output, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Leaves the alternate screen and puts the terminal's mode back as it was.
    public func restore() {
        guard !restored else { return }
        restored = true
        for source in signalSources { source.cancel() }
        write(ANSI.reset + ANSI.resetScrollRegion + ANSI.autowrapOn + ANSI.showCursor + ANSI.leaveAlternateScreen)
        _ = tcsetattr(input, TCSAFLUSH, &saved)
        signal(SIGTSTP, SIG_DFL)
        sink.finish()
    }

    /// Reads the input on a thread of its own: keys as they come; a lone ESC becomes Escape
    /// when nothing follows it within 40 ms; end of input or a read error stops the app.
    private func startReading() {
        let (input, sink) = (self.input, self.sink)
        let thread = Thread {
            var decoder = KeyDecoder()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                var poller = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, decoder.pending.isEmpty ? -1 : 40)
                if ready < 0, errno == EINTR { continue }
                if ready == 0 {
                    let keys = decoder.flush()
                    if !keys.isEmpty { sink.yield(.keys(keys)) }
                    continue
                }
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                guard count > 0 else {
                    sink.yield(.quit(signal: nil))
                    return
                }
                let keys = decoder.feed(buffer[..<count])
                if !keys.isEmpty { sink.yield(.keys(keys)) }
            }
        }
        thread.start()
    }
}

/// Why the terminal could not be set up.
public enum TerminalError: Error, Sendable, CustomStringConvertible {
    case notATerminal
    case cannotSetMode(errno: Int32)

    public var description: String {
        switch self {
        case .notATerminal: "menu-client needs a terminal on its standard input (run it in a terminal, or in tmux)"
        case .cannotSetMode(let code): "cannot put the terminal in raw mode: \(String(cString: strerror(code)))"
        }
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
#endif
