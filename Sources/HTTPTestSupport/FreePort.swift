// A loopback port for a test server that cannot be told to pick one itself (nginx, a process of
// another project): bound to port 0, read back, closed.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP port on 127.0.0.1 that was free a moment ago; another process may take it before the
/// caller binds it, so a caller retries with another on failure. Throws ``RawHTTPError/socket(_:)``.
package func freeLoopbackPort() throws(RawHTTPError) -> Int {
    try RefusingLoopbackPort().port  // closed as it goes away
}

/// A loopback port bound and never listened on, held until ``close()`` or deinit: a connection to
/// it is refused, and no other server (another test's, picking port 0) can take it meanwhile, as
/// it can a port whose server was shut down. For tests of "no server there".
package final class RefusingLoopbackPort {
    package let port: Int
    private var descriptor: Int32

    package init() throws(RawHTTPError) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw .socket(errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            let failure = errno
            Glibc.close(descriptor)
            throw .socket(failure)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    package func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}
