// The one decoder of the wire format the app tests read: the bodies of `/rows`, `/count`, a write
// and `/sessions`, and the error shape. Each type names every key the contract gives its body.

import MenuTestSupport

package struct LiveRowsPage: Decodable, Sendable {
    package var version: String
    package var revision: Int
    package var count: Int
    package var leafCount: Int
    package var offset: Int
    package var limit: Int
    package var rows: [LiveRow]
}

package struct LiveCount: Decodable, Equatable, Sendable {
    package var version: String
    package var count: Int
    package var leafCount: Int
}

package struct LiveSplice: Decodable, Equatable, Sendable, CustomStringConvertible {
    package var at: Int
    package var inserted: Int
    package var removed: Int

    package init(at: Int, inserted: Int, removed: Int) {
        self.at = at
        self.inserted = inserted
        self.removed = removed
    }

    package var description: String { "{at:\(at), inserted:\(inserted), removed:\(removed)}" }
}

package struct LiveChange: Decodable, Sendable {
    package var version: String
    package var revision: Int
    package var sessionId: String
    package var id: String
    package var isExpanded: Bool
    package var index: Int?
    package var count: Int
    package var leafCount: Int
    package var change: LiveSplice?
}

package struct LiveSessionBody: Decodable, Sendable {
    package var sessionId: String
}

package struct LiveErrorBody: Decodable, Sendable {
    package struct Detail: Decodable, Sendable {
        package var code: String
        package var message: String
    }
    package var error: Detail
}

/// The keys every CHANGE body has, no more.
package let liveChangeKeys: Set<String> = ["version", "revision", "sessionId", "id", "isExpanded", "index", "count", "leafCount", "change"]
