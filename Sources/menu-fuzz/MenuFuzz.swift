// libFuzzer entry points for menu-server's parsers. Build and run with scripts/fuzz.
//
// One binary, one target per parser of untrusted input, chosen by MENU_FUZZ_TARGET (see FuzzTarget):
//   config   – the menu config loader (JSON decoding, validation, error paths); a menu that
//              loads must walk as many rows as it counts, under toggles, and its opening hours
//              agree with themselves (nothing changes before the next change; open at its until)
//   request  – routing, query parameters, session header and body over a whole request, and the
//              same bytes read as a request head by HTTPServer's framing decision
//   body     – the PUT /groups/{id}/expansion body parser
//   portable – the POST /sessions body parser (a portable expansion), and the session it makes
//              read back by GET /session and made again
//   durable  – the durable store's file reader (resynchronisation, length repair), as a journal and as a snapshot
//   forwarded – X-Forwarded-For's last entry as an IP address, and the client address from a trusted proxy
//   requestid – X-Request-Id: accepted exactly when sane, a made one otherwise
//   preconditions – the If-None-Match / If-Match entity-tag list parser, alone and on a read and a write
//   cors     – Origin and Access-Control-Request-* as the CORS reader parses them, a --cors-origin value,
//              and a preflight and a read through a service with a policy (never an echoed origin)
//   search   – q and filter of GET /search, /rows and /count, and the matches against a naive scan
//   changes  – the query of GET /changes (since, wait): an answer now, or a long poll a write of its
//              session releases with that write, and no waiter left held
//   events   – Accept and Last-Event-ID of GET /changes: a stream opens with its open event and
//              carries a write of its session; no stream left held
//   language – Accept-Language and its lookup, a language tag's shape, and ?lang=, through reads of a menu with locales
//   admin    – Authorization: Bearer and its match against a token file
//   timestamp – an RFC 3339 time: read, written back in UTC, read back to the same millisecond
//   availability – the PUT /admin/availability body, applied to an overlay and resolved
//   at       – ?at= through reads of a menu with opening hours, against MenuHours
//   selection – the PUT /nodes/{id}/selection and PUT /selection bodies, and the selection they make
// Each input must never crash, and its outcome must be well formed (FuzzTarget.check): no 5xx and
// a JSON answer for a request, the same isExpanded as Foundation reads for a body, an address that
// prints and parses back to itself. The corpus regression test (FuzzCorpusTests) replays
// Fuzz/corpus through the same checks.

#if FUZZING
import Foundation
import FuzzTargets

let fuzzTarget = FuzzTarget(rawValue: ProcessInfo.processInfo.environment["MENU_FUZZ_TARGET"] ?? "config") ?? .config

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let problem = fuzzTarget.check(Array(UnsafeBufferPointer(start: data, count: size))) {
        fatalError("\(fuzzTarget.rawValue): \(problem)")
    }
    return 0
}
#else
@main
struct MenuFuzz {
    static func main() {
        print("menu-fuzz is a libFuzzer target: build and run it with scripts/fuzz")
    }
}
#endif
