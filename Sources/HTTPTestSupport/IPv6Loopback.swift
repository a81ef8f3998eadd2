#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether this machine can bind a TCP socket to `::1` at all (containers without IPv6 cannot):
/// an environment limit, not a bug, so tests that need it are skipped, by name, there. Here
/// rather than in a test file: a target that also sees CMicroHTTPD's copy of the socket
/// headers may find `sockaddr_in6`'s members attributed to that module (MemberImportVisibility).
package func machineCanBindIPv6Loopback() -> Bool {
    #if canImport(Glibc)
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET6, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
    } == 0
}
