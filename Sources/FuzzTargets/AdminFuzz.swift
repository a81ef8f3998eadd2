// The `admin` fuzz target: the input as an `Authorization` field (``BearerCredentials``), and a
// token found matched against a fixed token file (``AdminTokens``). A token taken is token68 of
// 1 to 512 bytes; written back after "Bearer " (any case, any spaces) it reads the same; it
// matches exactly when it is one of the file's tokens.

import AdminAccess
import Foundation

extension FuzzTarget {
    /// The tokens the target matches against, from a file written once per process.
    static let adminTokens: (tokens: AdminTokens, plain: [[UInt8]]) = {
        let plain = ["abcdefghijklmnop0123456789", "second-token-ABCDEFGH+/=="]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("menu-fuzz-tokens-\(getpid())").path
        try! Data(("# fuzz\n" + plain.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return (try! AdminTokens(path: path), plain.map { Array($0.utf8) })
    }()

    static func checkAdmin(_ bytes: [UInt8]) -> String? {
        let value = String(decoding: bytes, as: UTF8.self)
        let parsed = BearerCredentials(authorization: value)
        guard case .token(let token) = parsed else { return nil }
        guard (1 ... BearerCredentials.maxTokenLength).contains(token.count), BearerCredentials.isToken68(token) else {
            return "took a token that is not token68 of 1 to \(BearerCredentials.maxTokenLength) bytes"
        }
        let written = "bEaReR   " + String(decoding: token, as: UTF8.self) + " \t"
        guard BearerCredentials(authorization: written) == parsed else { return "\(written) reads otherwise" }
        let matched = adminTokens.tokens.match(token) != nil
        guard matched == adminTokens.plain.contains(token) else {
            return matched ? "matched a token not in the file" : "did not match a token of the file"
        }
        return nil
    }
}
