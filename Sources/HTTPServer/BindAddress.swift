import CMicroHTTPD

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket address the daemon binds, parsed from ``HTTPServerConfiguration/host`` with
/// `inet_pton` and handed to libmicrohttpd through `MHD_OPTION_SOCK_ADDR`.
///
/// Invariant: holds a complete `sockaddr_in`/`sockaddr_in6` (family, port in network order, address).
enum BindAddress {
    case ipv4(sockaddr_in)
    case ipv6(sockaddr_in6, dualStack: Bool)

    /// Parses an IPv4 or IPv6 literal (`[::1]` brackets allowed) with `inet_pton`.
    init(host: String, port: Int) throws(HTTPServerError) {
        let networkPort = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
        var literal = Substring(host)
        if literal.hasPrefix("["), literal.hasSuffix("]") {
            literal = literal.dropFirst().dropLast()
        }
        let text = String(literal)

        var v4 = sockaddr_in()
        if inet_pton(AF_INET, text, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = networkPort
            #if canImport(Darwin)
            v4.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
            #endif
            self = .ipv4(v4)
            return
        }

        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, text, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = networkPort
            #if canImport(Darwin)
            v6.sin6_len = UInt8(MemoryLayout<sockaddr_in6>.size)
            #endif
            let unspecified = withUnsafeBytes(of: v6.sin6_addr) { $0.allSatisfy { $0 == 0 } }
            self = .ipv6(v6, dualStack: unspecified)
            return
        }
        throw .invalidHost(host)
    }

    /// How the listening socket is opened.
    enum Family: Equatable {
        case ipv4, ipv6Only, dualStack
    }

    var family: Family {
        switch self {
        case .ipv4: return .ipv4
        case .ipv6(_, let dualStack): return dualStack ? .dualStack : .ipv6Only
        }
    }

    /// The socket family mode for `httpserver_mhd_start`: `MHD_USE_IPv6`, `MHD_USE_DUAL_STACK` or neither.
    var mode: httpserver_mhd_address_mode {
        switch family {
        case .ipv4: return HTTPSERVER_MHD_IPV4
        case .ipv6Only: return HTTPSERVER_MHD_IPV6_ONLY
        case .dualStack: return HTTPSERVER_MHD_DUAL_STACK
        }
    }

    /// Lends the address as a `struct sockaddr *` for the duration of `body` only.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        switch self {
        case .ipv4(var address):
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
            }
        case .ipv6(var address, _):
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
            }
        }
    }
}
