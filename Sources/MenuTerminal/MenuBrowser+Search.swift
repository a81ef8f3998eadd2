import MenuClient

/// `/`: the search line. Each edit asks the server (`GET /search?q=`) once typing pauses for
/// ``searchDebounce``, cancelling the search asked for the text before; the answer comes back
/// through ``searchResults`` and is shown only if it answers the text as it is then. ↑/↓ and
/// PageUp/PageDown choose a match, Enter reveals it in the tree (`POST /nodes/{id}/reveal`) and
/// puts the cursor on it; Escape (or Backspace on an empty line) leaves, the tree as it was.
extension MenuBrowser {
    /// How long typing must pause before the text is searched.
    public static let searchDebounce = Duration.milliseconds(150)
    /// Matches asked for a search (the list shows as many as fit).
    public static let searchLimit = 50

    func startSearch() {
        search = SearchPanel()
        typing = .search
    }

    func leaveSearch() {
        pendingSearch?.cancel()
        pendingSearch = nil
        search = nil
        typing = .none
    }

    func typeSearch(_ key: Key) async {
        guard let panel = search else { return leaveSearch() }
        let page = max(1, panel.listHeight(in: viewport.height) - 1)
        switch key {
        case .character(let character): edit(panel.text + String(character))
        case .backspace: panel.text.isEmpty ? leaveSearch() : edit(String(panel.text.dropLast()))
        case .up: search?.move(by: -1)
        case .down, .tab: search?.move(by: 1)
        case .pageUp: search?.move(by: -page)
        case .pageDown: search?.move(by: page)
        case .enter: await choose()
        case .escape: leaveSearch()
        default: break
        }
    }

    /// Takes a search's answer; false when it was dropped (stale, or the search was left).
    @discardableResult
    public func handle(_ result: SearchResult) -> Bool {
        search?.accept(result) ?? false
    }

    private func edit(_ text: String) {
        search?.edit(text)
        pendingSearch?.cancel()
        pendingSearch = nil
        guard let panel = search, !panel.text.isEmpty else { return }
        let (source, sink, generation) = (source, searchSink, panel.generation)
        pendingSearch = Task {
            do { try await Task.sleep(for: Self.searchDebounce) } catch { return }
            let outcome = await Self.search(panel.text, in: source)
            if !Task.isCancelled { sink.yield(SearchResult(generation: generation, outcome: outcome)) }
        }
    }

    private static func search(_ text: String, in source: any MenuRowSource) async -> Result<
        MenuSearchPage, MenuClientError
    > {
        do throws(MenuClientError) {
            return .success(try await source.search(text, filters: [:], offset: 0, limit: searchLimit))
        } catch {
            return .failure(error)
        }
    }

    /// Enter: reveals the selected match. Typed faster than the debounce, the text is searched
    /// now and its first match taken. No match: the text is tried as a node id; a server without
    /// `GET /search` gets the old jump (an id, else a fetched title).
    private func choose() async {
        guard var panel = search, !panel.text.isEmpty else { return leaveSearch() }
        if !panel.isCurrent || panel.problem != nil {
            pendingSearch?.cancel()
            _ = panel.accept(
                SearchResult(generation: panel.generation, outcome: await Self.search(panel.text, in: source)))
        }
        leaveSearch()
        if let match = panel.selectedMatch {
            do throws(MenuClientError) {
                follow(try await source.reveal(match.id))
                message = ("found " + match.pathText(), false)
            } catch {
                message = (error.description, true)
            }
            return
        }
        // No search on this server: ids and fetched titles, as before it.
        if panel.serverHasNoSearch { return await jump(to: panel.text) }
        if let problem = panel.problem {
            message = (problem.description, true)
            return
        }
        do throws(MenuClientError) {
            follow(try await source.reveal(panel.text))
            message = ("found " + panel.text, false)
        } catch  where error.code == "unknown_node" || error.code == "not_found" {
            message = ("nothing matches \"\(panel.text)\"", true)
        } catch {
            message = (error.description, true)
        }
    }
}
