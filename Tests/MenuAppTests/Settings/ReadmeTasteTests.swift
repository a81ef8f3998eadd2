// README.md's "A taste of the API" is real output: each `$ curl` line is sent to a server on the
// shipped Config/menu.json and its answer must be the one printed, byte for byte, once the values
// that differ on every run (the session id, the request id, the date) are put in.

import Foundation
import MenuApp
import MenuAppTestSupport
import MenuTestSupport
import Testing

extension AppTests {
    @Suite struct ReadmeTasteTests {
        /// One `$ curl …` line of the transcript and the lines printed after it.
        struct Exchange {
            var method = "GET"
            var target = ""
            var headers: [(String, String)] = []
            /// `-i`: the status line and the headers are printed before the body.
            var includesHead = false
            var printed: [String] = []
        }

        /// The transcript's exchanges, in order.
        static func transcript() throws -> [Exchange] {
            let readme = try String(
                contentsOf: LivePaths.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
            let section = try #require(readme.range(of: "## A taste of the API").map { readme[$0.upperBound...] })
            let start = try #require(section.range(of: "```text\n"))
            let end = try #require(section[start.upperBound...].range(of: "```"))
            var exchanges: [Exchange] = []
            for line in section[start.upperBound ..< end.lowerBound].split(
                separator: "\n", omittingEmptySubsequences: false)
            {
                if line.hasPrefix("$ curl ") {
                    exchanges.append(try exchange(String(line.dropFirst(2))))
                } else if !exchanges.isEmpty {
                    exchanges[exchanges.count - 1].printed.append(String(line))
                }
            }
            if var last = exchanges.popLast() {  // the block's closing newline
                if last.printed.last == "" { last.printed.removeLast() }
                exchanges.append(last)
            }
            return exchanges
        }

        /// `curl -s[i] [-X METHOD] [-H "Name: value"] URL`, the URL on localhost:8080, quoted or not.
        static func exchange(_ command: String) throws -> Exchange {
            var words: [String] = []
            var word = ""
            var quote: Character?
            for character in command {
                if let open = quote {
                    if character == open { quote = nil } else { word.append(character) }
                } else if character == "\"" || character == "'" {
                    quote = character
                } else if character == " " {
                    if !word.isEmpty { words.append(word) }
                    word = ""
                } else {
                    word.append(character)
                }
            }
            if !word.isEmpty { words.append(word) }
            var exchange = Exchange()
            var index = 1
            while index < words.count {
                switch words[index] {
                case "-s": break
                case "-si": exchange.includesHead = true
                case "-X":
                    index += 1
                    exchange.method = words[index]
                case "-H":
                    index += 1
                    let parts = words[index].split(separator: ":", maxSplits: 1)
                    exchange.headers.append((String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces)))
                default:
                    let url = words[index]
                    try #require(
                        url.hasPrefix("localhost:8080/"), "the README's curl lines ask localhost:8080, not \(url)")
                    exchange.target = String(url.dropFirst("localhost:8080".count))
                }
                index += 1
            }
            return exchange
        }

        @Test func theTranscriptHasSevenExchangesOneShowingItsHead() throws {
            let exchanges = try Self.transcript()
            #expect(exchanges.count == 7)
            #expect(exchanges.filter(\.includesHead).count == 1)
        }

        @Test func everyAnswerInTheTranscriptIsWhatTheServerSends() throws {
            let live = try LiveServer {
                $0.configPath = LivePaths.packageRoot.appendingPathComponent("Config/menu.json").path
            }
            defer { live.shutdown() }
            let connection = try live.connect()
            // The README's session id, and the live one that stands for it in later requests.
            var sessions: [String: String] = [:]
            for exchange in try Self.transcript() {
                let headers = exchange.headers.map { ($0.0, sessions[$0.1] ?? $0.1) }
                let answer = try connection.request(exchange.method, exchange.target, headers: headers)
                var printed = exchange.printed
                if exchange.includesHead {
                    let blank = try #require(printed.firstIndex(of: ""))
                    let head = Array(printed[..<blank])
                    printed = Array(printed[(blank + 1)...])
                    #expect(head.first == "HTTP/1.1 \(answer.status) \(answer.status == 200 ? "OK" : "?")")
                    for line in head.dropFirst() {
                        let parts = line.split(separator: ":", maxSplits: 1).map(String.init)
                        let (name, value) = (parts[0], parts[1].trimmingCharacters(in: .whitespaces))
                        let sent = try #require(answer.header(name), "the README shows \(name), the server sends none")
                        switch name {
                        case "Date", "X-Request-Id": break  // differ on every run
                        case "X-Session-Id": sessions[value] = sent
                        default: #expect(sent == value, "\(exchange.method) \(exchange.target): \(name)")
                        }
                    }
                    #expect(answer.headers.count == head.count - 1, "\(answer.headers.map(\.name))")
                }
                var expected = printed.joined(separator: "\n")
                for (shown, live) in sessions { expected = expected.replacingOccurrences(of: shown, with: live) }
                #expect(answer.text == expected, "\(exchange.method) \(exchange.target)")
            }
            #expect(sessions.count == 1)
        }
    }
}
