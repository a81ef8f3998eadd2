extension Menu {
    /// Whether `node` is left out of the listing while it is unavailable: its `whenUnavailable`,
    /// or its nearest ancestor's, is `hide`. O(1).
    public func hidesWhenUnavailable(_ node: Node) -> Bool {
        let bits = storage.hiddenWhenUnavailable
        return !bits.isEmpty && bits[node >> 6] & (1 << UInt64(node & 63)) != 0
    }

    /// Whether any node hides while unavailable: without one, availability never changes the listing.
    public var hidesAnyWhenUnavailable: Bool { !storage.hiddenWhenUnavailable.isEmpty }
}
