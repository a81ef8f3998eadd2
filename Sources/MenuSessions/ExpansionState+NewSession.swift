import MenuModel

extension SessionState {
    /// The state a new session keeps, in arrays of exactly its size (``compacted``), after checking
    /// it against the store's caps: `.tooManyChanges` past `maxChangedGroups` entries,
    /// `.sessionTooLarge` past `maxStateBytes`. O(entries).
    package func checkedForNewSession(maxChangedGroups: Int, maxStateBytes: Int) throws(SessionStoreError)
        -> SessionState
    {
        guard changedGroupCount <= maxChangedGroups else { throw .tooManyChanges(limit: maxChangedGroups) }
        let state = compacted
        guard state.heapBytes <= maxStateBytes else { throw .sessionTooLarge(limit: maxStateBytes) }
        return state
    }
}
