import MenuClient

/// The app's loop: terminal input, the table's background events, other devices' changes to the
/// session (``MenuTable/liveChanges()``) and the answers of searches
/// merged into one stream, each handled by the ``MenuBrowser`` in order, then the changed lines
/// painted.
///
/// Invariant: one input is handled at a time (a write finishes before the next key is read from
/// the stream; keys typed meanwhile wait there), and the screen is painted after each.
@MainActor
public struct MenuClientApp {
    let table: MenuTable
    let terminal: Terminal
    let title: String

    public init(table: MenuTable, terminal: Terminal, title: String) {
        self.table = table
        self.terminal = terminal
        self.title = title
    }

    private enum Input: Sendable {
        case terminal(TerminalInput)
        case table(MenuTableEvent)
        case searched(SearchResult)
    }

    /// Runs until `q`, end of input or a stop signal; returns that signal (nil for the others).
    public func run() async -> Int32? {
        let size = terminal.size
        let browser = MenuBrowser(source: table, title: title, width: size.width, height: size.height)
        let (inputs, sink) = AsyncStream.makeStream(of: Input.self)
        let forwarders = [
            Task { [terminal] in
                for await input in terminal.inputs { sink.yield(.terminal(input)) }
                sink.finish()
            },
            Task { [table] in for await event in table.events { sink.yield(.table(event)) } },
            // Other devices' writes to the session, as they happen (long polls of the changes feed).
            Task { [table] in
                for await events in table.liveChanges() { for event in events { sink.yield(.table(event)) } }
            },
            Task { [results = browser.searchResults] in for await result in results { sink.yield(.searched(result)) } }
        ]
        defer { for forwarder in forwarders { forwarder.cancel() } }
        terminal.write(browser.paint())
        for await input in inputs {
            switch input {
            case .terminal(.keys(let keys)):
                for key in keys where !browser.wantsToQuit { await browser.handle(key) }
                if browser.wantsToQuit { return nil }
            case .terminal(.resized):
                let size = terminal.size
                browser.resize(width: size.width, height: size.height)
            case .terminal(.quit(let signal)):
                return signal
            case .table(let event):
                guard browser.handle(event) else { continue }
            case .searched(let result):
                guard browser.handle(result) else { continue }
            }
            terminal.write(browser.paint())
        }
        return nil
    }
}
