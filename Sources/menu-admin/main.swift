// `menu-admin`: the admin API from a terminal, for the restaurant's staff: mark a dish sold out,
// paused or available again, list what is not available, reload the menu. Foundation only (the
// token is read from a file, never from the command line, where `ps` and shell history see it).

import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let usage = """
    usage: menu-admin [--url URL] [--token-file PATH] COMMAND
      list                                         what is not available now
      sold-out ID... [--until TIME] [--reason TEXT]
      pause ID... [--until TIME] [--reason TEXT]
      available ID...                              available again
      reload                                       read the menu config again (as SIGHUP)
    --url         the admin listener (default $MENU_ADMIN_URL, else http://127.0.0.1:9091)
    --token-file  a file whose first line is a token of --admin-token-file (default $MENU_ADMIN_TOKEN_FILE)
    TIME          RFC 3339 (2026-12-06T19:30:00+01:00), HH:MM (the next such time here), or +30m, +2h
    """

/// Exit codes: 0 done, 1 refused by the server, 2 a usage mistake, 3 the server not reached.
func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data(("menu-admin: " + message + "\n").utf8))
    exit(code)
}

var arguments = Array(CommandLine.arguments.dropFirst())
let environment = ProcessInfo.processInfo.environment
var url = environment["MENU_ADMIN_URL"] ?? "http://127.0.0.1:9091"
var tokenFile = environment["MENU_ADMIN_TOKEN_FILE"]
var until: String?
var reason: String?
var words: [String] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    func value() -> String {
        guard !arguments.isEmpty else { fail("\(argument) needs a value\n\(usage)", code: 2) }
        return arguments.removeFirst()
    }
    switch argument {
    case "--url": url = value()
    case "--token-file": tokenFile = value()
    case "--until": until = value()
    case "--reason": reason = value()
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        if argument.hasPrefix("--") { fail("unknown option \(argument)\n\(usage)", code: 2) }
        words.append(argument)
    }
}
guard let command = words.first else { fail(usage, code: 2) }
let ids = Array(words.dropFirst())

/// `text` as an RFC 3339 time: as given when it is one already, the next HH:MM here, or now
/// plus minutes or hours.
func resolvedTime(_ text: String) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = .current
    formatter.formatOptions = [.withInternetDateTime]
    if text.contains("T") { return text }
    let now = Date()
    if text.hasPrefix("+"), let amount = Double(text.dropFirst().dropLast()), let unit = text.last,
        let seconds = ["m": 60.0, "h": 3_600.0][String(unit)]
    {
        return formatter.string(from: now.addingTimeInterval(amount * seconds))
    }
    let parts = text.split(separator: ":").compactMap { Int($0) }
    guard parts.count == 2, (0 ... 23).contains(parts[0]), (0 ... 59).contains(parts[1]) else {
        fail("--until \(text) is not a time: give 19:30, +30m, +2h or 2026-12-06T19:30:00+01:00", code: 2)
    }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = .current
    guard var date = calendar.date(bySettingHour: parts[0], minute: parts[1], second: 0, of: now) else {
        fail("--until \(text) does not exist today here", code: 2)
    }
    if date <= now { date = calendar.date(byAdding: .day, value: 1, to: date) ?? date }
    return formatter.string(from: date)
}

/// The first line of the token file that is neither empty nor a `#` comment.
func token(from tokenFile: String?) -> String {
    guard let tokenFile else { fail("no token: give --token-file or set MENU_ADMIN_TOKEN_FILE", code: 2) }
    guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
        fail("cannot read the token file \(tokenFile)", code: 2)
    }
    let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
    guard let line = lines.first(where: { !$0.isEmpty && !$0.hasPrefix("#") }) else {
        fail("the token file \(tokenFile) has no token line", code: 2)
    }
    return line
}

let method: String
let path: String
var body: Data?
switch command {
case "list":
    (method, path) = ("GET", "/admin/availability")
case "reload":
    (method, path) = ("POST", "/admin/reload")
case "sold-out", "pause", "available":
    guard !ids.isEmpty else { fail("\(command) needs at least one node id\n\(usage)", code: 2) }
    if command == "available", until != nil || reason != nil {
        fail("available takes no --until or --reason", code: 2)
    }
    let state = ["sold-out": "sold_out", "pause": "paused", "available": "available"][command]!
    let changes: [[String: String]] = ids.map { id in
        var change = ["id": id, "state": state]
        if let until { change["until"] = resolvedTime(until) }
        if let reason { change["reason"] = reason }
        return change
    }
    (method, path) = ("PUT", "/admin/availability")
    body = try JSONSerialization.data(withJSONObject: ["changes": changes], options: [.sortedKeys])
default:
    fail("unknown command \(command)\n\(usage)", code: 2)
}

guard let target = URL(string: url.hasSuffix("/") ? String(url.dropLast()) + path : url + path) else {
    fail("--url \(url) is not a URL", code: 2)
}
var request = URLRequest(url: target, timeoutInterval: 30)
request.httpMethod = method
request.setValue("Bearer " + token(from: tokenFile), forHTTPHeaderField: "Authorization")
if let body {
    request.httpBody = body
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
}
let data: Data
let response: URLResponse
do {
    (data, response) = try await URLSession.shared.data(for: request)
} catch {
    fail("cannot reach \(url): \(error.localizedDescription)", code: 3)
}
let status = (response as? HTTPURLResponse)?.statusCode ?? 0
let answer = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
guard (200 ..< 300).contains(status) else {
    let error = answer["error"] as? [String: Any]
    fail(
        "\(status) \(error?["code"] as? String ?? ""): \(error?["message"] as? String ?? String(decoding: data, as: UTF8.self))",
        code: 1)
}
switch command {
case "list":
    let entries = answer["unavailable"] as? [[String: Any]] ?? []
    if entries.isEmpty { print("everything is available (revision \(answer["revision"] ?? 0))") }
    for entry in entries {
        let fields = ["id", "state", "until", "reason"].map { entry[$0] as? String ?? "" }
        print(fields.joined(separator: "\t"))
    }
case "reload":
    print(answer["summary"] as? String ?? String(decoding: data, as: UTF8.self))
default:
    let changed = answer["changed"] as? [String] ?? []
    print(
        "revision \(answer["revision"] ?? 0): "
            + (changed.isEmpty ? "nothing changed" : "changed " + changed.joined(separator: ", ")))
}
