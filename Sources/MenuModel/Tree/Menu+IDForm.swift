extension Menu {
    /// The longest node id, in characters (all ASCII): the config's limit.
    public static var idLengthLimit: Int { MenuBuilder.idLengthLimit }

    /// Whether `id` has the form every node id has (1 to ``idLengthLimit`` characters from
    /// A-Z a-z 0-9 . _ ~ -, as the config requires): an id of another form names no node of any
    /// menu, so a client that sends one made a mistake. O(length), stops at the first wrong byte.
    public static func isWellFormedID(_ id: String) -> Bool { MenuBuilder.isValidID(id) }
}
