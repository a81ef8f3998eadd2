// The framing half of the `request` fuzz target: the input read as a request head, its header
// lines split into fields as libmicrohttpd 0.9.75 does, HTTPServer's framing decision taken on
// them, and every accepted head checked against two readers of the same lines: libmicrohttpd's
// framing (as observed on the real library) and a strict RFC 9112 reader that trims whitespace,
// splits coding lists and unfolds continuation lines. An accepted head on which they disagree is a
// request-smuggling shape: a finding.

import HTTPServer

/// How a reader frames a request body.
enum FuzzFraming: Equatable {
    case none
    case chunked
    case length(Int)
    /// The reader refuses the head itself (libmicrohttpd's own 400) or cannot frame it.
    case refused
    /// libmicrohttpd reads the body until the connection closes.
    case untilClose
}

/// One header line split as libmicrohttpd 0.9.75 does: the name up to the first colon (whitespace
/// before it kept), the value after it without leading spaces or tabs and ending at a NUL; a line
/// starting with a space or tab is glued onto the previous field's *name*. Nil when libmicrohttpd
/// refuses the head itself (a continuation line before any header).
func fuzzHeaderFields(_ lines: [ArraySlice<UInt8>]) -> [(name: [UInt8], value: [UInt8])]? {
    var fields: [(name: [UInt8], value: [UInt8])] = []
    for line in lines {
        if let first = line.first, first == 0x20 || first == 0x09 {
            guard !fields.isEmpty else { return nil }
            fields[fields.count - 1].name += line.drop { $0 == 0x20 || $0 == 0x09 }
            continue
        }
        guard let colon = line.firstIndex(of: 0x3A) else { continue }  // libmicrohttpd's 400
        let name = line[..<colon]
        // A name starting with NUL (or empty) is dropped unseen; a NUL later in it gets a 400.
        if name.first == 0 || name.isEmpty { continue }
        if name.contains(0) { return nil }
        let value = line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }.prefix { $0 != 0 }
        fields.append((Array(name), Array(value)))
    }
    return fields
}

/// libmicrohttpd 0.9.75's framing of `fields`: the first Transfer-Encoding decides (chunked only
/// for exactly "chunked", any case); else the first Content-Length, digits only.
func fuzzLibraryFraming(_ fields: [(name: [UInt8], value: [UInt8])]) -> FuzzFraming {
    func named(_ name: String) -> [[UInt8]] {
        fields.filter { String(decoding: $0.name, as: UTF8.self).lowercased() == name }.map(\.value)
    }
    if let coding = named("transfer-encoding").first {
        return String(decoding: coding, as: UTF8.self).lowercased() == "chunked" ? .chunked : .untilClose
    }
    guard let length = named("content-length").first else { return .none }
    return fuzzDecimal(length[...]).map(FuzzFraming.length) ?? .refused
}

/// A strict RFC 9112 reader's framing of the raw lines: NUL and CR replaced by a space,
/// continuation lines unfolded into the previous value, whitespace in a name refused, values
/// trimmed, codings split on commas.
func fuzzRFCFraming(_ lines: [ArraySlice<UInt8>], isHTTP10: Bool) -> FuzzFraming {
    var fields: [(name: String, value: String)] = []
    for line in lines {
        let bytes = line.map { $0 == 0 || $0 == 0x0D ? 0x20 : $0 }
        let text = String(decoding: bytes, as: UTF8.self)
        if let first = bytes.first, first == 0x20 || first == 0x09 {
            guard !fields.isEmpty else { return .refused }
            fields[fields.count - 1].value += " " + text
            continue
        }
        guard let colon = text.firstIndex(of: ":") else { continue }
        let name = text[..<colon]
        if name.contains(" ") || name.contains("\t") { return .refused }
        fields.append((String(name), String(text[text.index(after: colon)...])))
    }
    func trimmed(_ text: String) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
    let codings = fields.filter { trimmed($0.name).lowercased() == "transfer-encoding" }
        .flatMap { $0.value.split(separator: ",").map { trimmed(String($0)).lowercased() } }
    let lengths = fields.filter { trimmed($0.name).lowercased() == "content-length" }.map { trimmed($0.value) }
    if !codings.isEmpty {
        return !isHTTP10 && lengths.isEmpty && codings == ["chunked"] ? .chunked : .refused
    }
    guard !lengths.isEmpty else { return .none }
    let values = lengths.map { fuzzDecimal(Array($0.utf8)[...]) }
    guard let length = values[0], values.allSatisfy({ $0 == length }) else { return .refused }
    return .length(length)
}

/// 1*DIGIT, saturating (any such value is over every limit).
func fuzzDecimal(_ digits: ArraySlice<UInt8>) -> Int? {
    guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    return digits.reduce(0) { value, digit in
        let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times10.addingReportingOverflow(Int(digit - 0x30))
        return overflow || overflow2 ? Int.max : sum
    }
}

/// Reads `bytes` as a request head (request line, then header lines, split on LF with a CR before
/// it dropped) and checks the framing decision against both readers; nil when they agree (or the
/// head is refused), otherwise the disagreement.
func checkFraming(head bytes: [UInt8]) -> String? {
    var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map {
        $0.last == 0x0D ? $0.dropLast() : $0
    }
    guard !lines.isEmpty else { return nil }
    let requestLine = lines.removeFirst()
    let isHTTP10 = requestLine.suffix(8).elementsEqual("HTTP/1.0".utf8)
    if let end = lines.firstIndex(where: \.isEmpty) { lines.removeSubrange(end...) }
    guard let fields = fuzzHeaderFields(lines) else { return nil }
    let collected = FramingHeaders(collecting: fields)
    let decision = Framing.check(collected, isHTTP10: isHTTP10, maxBodyBytes: 1 << 16)
    guard case .accept(let declaredLength) = decision else { return nil }
    let wrapper: FuzzFraming =
        declaredLength.map(FuzzFraming.length)
        ?? (collected.fields.contains { $0.name == "transfer-encoding" } ? .chunked : .none)
    let text = String(reflecting: String(decoding: bytes, as: UTF8.self))
    // A reader that refuses the head itself cannot be desynchronised by it.
    let library = fuzzLibraryFraming(fields)
    if library != wrapper, library != .refused {
        return "accepted head framed \(wrapper) by the wrapper, \(library) by libmicrohttpd: \(text)"
    }
    let rfc = fuzzRFCFraming(lines, isHTTP10: isHTTP10)
    if rfc != wrapper, rfc != .refused {
        return "accepted head framed \(wrapper) by the wrapper, \(rfc) by an RFC 9112 reader: \(text)"
    }
    return nil
}
