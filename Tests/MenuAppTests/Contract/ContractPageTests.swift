import Foundation
import MenuAppTestSupport
import MenuService
import MenuTestSupport
import Testing

extension AppTests {
    /// The browser page (`GET /`, `/app.js`, `/app.css`) over both transports: the checked-in files'
    /// exact bytes from the binary, with their media type, a strong tag that revalidates to 304, and
    /// caching headers that make a browser revalidate; the page loads nothing from another origin.
    @Suite("Contract: the browser page's files, in-process and over real HTTP")
    struct ContractPageTests {
        static let files: [(path: String, files: [String], type: String)] = [
            ("/", ["Web/index.html"], "text/html; charset=utf-8"),
            ("/app.js", WebAsset.script.files, "text/javascript; charset=utf-8"),
            ("/app.css", ["Web/app.css"], "text/css; charset=utf-8")
        ]

        /// The checked-in files' bytes one after another, each ending in a newline.
        static func onDisk(_ files: [String]) throws -> [UInt8] {
            try files.flatMap { file -> [UInt8] in
                let bytes = Array(try Data(contentsOf: repositoryRoot.appendingPathComponent(file)))
                return bytes.last == UInt8(ascii: "\n") ? bytes : bytes + [UInt8(ascii: "\n")]
            }
        }

        @Test(arguments: ContractTransport.allCases)
        func eachFileIsServedAsCheckedInWithItsTypeAndAStrongTagThatRevalidates(over transport: ContractTransport)
            async throws
        {
            let server = try transport.start()
            defer { server.shutdown() }
            let client = server.client()
            var tags: Set<String> = []
            for (path, files, type) in Self.files {
                let onDisk = try Self.onDisk(files)
                let response = try await client.get(path)
                #expect(response.status == 200, "\(path)")
                #expect(response.body == onDisk, "\(path) is not \(files) as checked in (rebuild after editing them)")
                #expect(response.header("Content-Type") == type)
                #expect(response.header("Cache-Control") == "no-cache")
                #expect(response.header("X-Content-Type-Options") == "nosniff")
                let tag = try #require(response.header("ETag"))
                #expect(tag.wholeMatch(of: /"asset-[0-9a-f]{16}"/) != nil, "\(tag)")
                tags.insert(tag)
                let head = try await client.send("HEAD", path)
                // The HTTP layer drops a HEAD's body; in-process the service's answer still has it.
                #expect(
                    head.status == 200 && head.header("ETag") == tag && (transport == .inProcess || head.body.isEmpty))
                #expect(head.header("Content-Length") == String(onDisk.count))
                for condition in [tag, "W/\(tag)", "\"other\", \(tag)", "*"] {
                    let revalidated = try await client.send("GET", path, headers: [("If-None-Match", condition)])
                    #expect(revalidated.status == 304, "\(path) If-None-Match: \(condition)")
                    #expect(
                        revalidated.body.isEmpty && revalidated.header("ETag") == tag
                            && revalidated.header("Cache-Control") == "no-cache")
                }
                let stale = try await client.send(
                    "GET", path, headers: [("If-None-Match", "\"asset-0000000000000000\"")])
                #expect(stale.status == 200 && stale.body == onDisk)
                let malformed = try await client.send("GET", path, headers: [("If-None-Match", "asset")])
                try liveExpectError(malformed, status: 400, code: "invalid_parameter")
                let query = try await client.get(path + "?v=1")
                try liveExpectError(query, status: 400, code: "invalid_parameter")
            }
            #expect(tags.count == Self.files.count, "each file has its own tag")
        }

        @Test(arguments: ContractTransport.allCases)
        func thePageAllowsOnlyItsOwnOriginAndNamesOnlyItsOwnFiles(over transport: ContractTransport) async throws {
            let server = try transport.start()
            defer { server.shutdown() }
            let page = try await server.client().get("/")
            #expect(
                page.header("Content-Security-Policy")
                    == "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
            #expect(
                page.text.contains(#"<script src="app.js" defer></script>"#) && page.text.contains(#"href="app.css""#))
            for file in Self.files.flatMap(\.files) {
                let text = try String(contentsOf: repositoryRoot.appendingPathComponent(file), encoding: .utf8)
                #expect(
                    !text.contains("http://") && !text.contains("https://") && !text.contains("//cdn"),
                    "\(file) names another origin")
            }
        }
    }
}
