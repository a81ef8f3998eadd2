import Foundation

/// A menu file of `groups` top-level groups `g0`… each holding one row `r0`…, written to a fresh
/// temporary path for a server started on it (the file's JSON twin of `wideMenu(groups:)`).
/// The caller removes it.
package func writeWideMenuFile(groups: Int) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("wide-\(UUID().uuidString).json").path
    let items = (0 ..< groups).map {
        #"{"id":"g\#($0)","title":"G\#($0)","items":[{"id":"r\#($0)","title":"R\#($0)"}]}"#
    }
    try Data((#"{"title":"Wide","items":["# + items.joined(separator: ",") + "]}").utf8).write(
        to: URL(fileURLWithPath: path))
    return path
}
