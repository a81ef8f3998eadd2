import ChildProcess
import Foundation
import HTTPTestSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A real nginx (Debian's `/usr/sbin/nginx`) in front of some upstream ports on 127.0.0.1:
/// round-robin over them, HTTP/1.1 with kept-alive upstream connections, a request never sent on
/// to a second upstream (`proxy_next_upstream off`: what one instance answered is what the
/// client gets). Run in the foreground (`daemon off`) with its master and one worker, its config,
/// logs, pid and temporary files in a directory of its own, on a free loopback port.
///
/// The access log (``accessLog()``) has one line per request: `METHOD TARGET STATUS UPSTREAM`,
/// the upstream being the `127.0.0.1:PORT` that answered.
///
/// Invariant: while the object lives and ``stop()`` has not run, nginx listens on ``port``;
/// ``stop()`` (and `deinit`) ends it and its worker and removes the directory. Cost: a process
/// start, about 50 ms.
package final class NginxProcess: Sendable {
    /// Where Debian installs nginx.
    package static let executable = "/usr/sbin/nginx"

    /// The port nginx listens on, on 127.0.0.1.
    package let port: Int
    /// The directory of its config, logs and temporary files.
    package let directory: String
    private let process: ChildProcess
    private let stopped = Mutex(false)
    /// The access log's file name in ``directory``.
    private let accessLogName: String

    /// Starts nginx proxying to `upstreams` (ports on 127.0.0.1), round-robin. `keepalive`: idle
    /// upstream connections each worker keeps (0: a new one per request). Throws when nginx
    /// refuses the config or does not listen within 10 s.
    package convenience init(upstreams: [Int], keepalive: Int = 16) throws(NginxError) {
        try self.init(accessLogName: "access.log") { directory, port in
            Self.config(directory: directory, port: port, upstreams: upstreams, keepalive: keepalive)
        }
    }

    /// Starts nginx with the deployment config at `path` (such as `Config/nginx.conf`) as shipped,
    /// changed only so that it runs here: in the foreground, its log, state and pid paths
    /// (`/var/log/nginx/`, `/var/lib/nginx/`, `/run/`) in this object's directory, listening on a
    /// free loopback port instead of 80, with `upstreams` (ports on 127.0.0.1) as its upstream
    /// servers. ``accessLog()`` reads the file its `access_log` names (`menu-access.log`), in the
    /// config's own format.
    package convenience init(deploymentConfig path: String, upstreams: [Int]) throws(NginxError) {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw NginxError("cannot read \(path): \(error)")
        }
        try self.init(accessLogName: "menu-access.log") { directory, port in
            Self.deploymentConfig(text, directory: directory, port: port, upstreams: upstreams)
        }
    }

    private init(accessLogName: String, config: (_ directory: String, _ port: Int) -> String) throws(NginxError) {
        self.accessLogName = accessLogName
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)").path
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false) } catch {
            throw NginxError("cannot create \(directory): \(error)")
        }
        var lastProblem = ""
        // A free port can be taken by another process before nginx binds it: try a few.
        for _ in 0 ..< 5 {
            let port: Int
            do { port = try freeLoopbackPort() } catch { throw NginxError("no free port: \(error)") }
            let configPath = directory + "/nginx.conf"
            do { try config(directory, port).write(toFile: configPath, atomically: true, encoding: .utf8) } catch {
                throw NginxError("cannot write \(configPath): \(error)")
            }
            let child: ChildProcess
            do {
                child = try ChildProcess(
                    executable: Self.executable,
                    arguments: ["-p", directory, "-e", directory + "/error.log", "-c", configPath],
                    standardOutput: .discard, standardError: .file(directory + "/stderr.log"))
            } catch {
                throw NginxError("cannot start \(Self.executable): \(error)")
            }
            if Self.awaitListening(port: port, while: child) {
                self.port = port
                process = child
                return
            }
            child.waitOrKill(timeout: .seconds(5))
            lastProblem = Self.read(directory + "/stderr.log") + Self.read(directory + "/error.log")
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw NginxError("nginx did not start: \(lastProblem)")
    }

    deinit { stop() }

    /// The base URL clients use: `http://127.0.0.1:PORT`.
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The access log so far, one line per request answered: `METHOD TARGET STATUS UPSTREAM`, or
    /// the deployment config's own format.
    package func accessLog() -> [String] {
        Self.read(directory + "/" + accessLogName).split(separator: "\n").map(String.init)
    }

    /// Every file nginx wrote in ``directory`` (access and error logs included), concatenated.
    package func allLogText() -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted().map { Self.read(directory + "/" + $0) }.joined()
    }

    /// Stops nginx (SIGTERM: its worker ends too; SIGKILL after 10 s) and removes its directory.
    package func stop() {
        guard
            !stopped.withLock({ was in
                defer { was = true }
                return was
            })
        else { return }
        process.send(SIGTERM)
        process.waitOrKill(timeout: .seconds(10))
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The config: foreground master with one worker (`user root` when run as root, so the worker
    /// can use the temporary directories made here), round-robin upstream with `keepalive`,
    /// nothing retried on another upstream.
    static func config(directory: String, port: Int, upstreams: [Int], keepalive: Int) -> String {
        let servers = upstreams.map { "        server 127.0.0.1:\($0);" }.joined(separator: "\n")
        return """
            daemon off;
            master_process on;
            worker_processes 1;
            \(geteuid() == 0 ? "user root;" : "")
            error_log \(directory)/error.log;
            pid \(directory)/nginx.pid;
            events { worker_connections 1024; }
            http {
                log_format upstream '$request_method $request_uri $status $upstream_addr';
                access_log \(directory)/access.log upstream;
                client_body_temp_path \(directory)/client_body;
                proxy_temp_path \(directory)/proxy;
                fastcgi_temp_path \(directory)/fastcgi;
                uwsgi_temp_path \(directory)/uwsgi;
                scgi_temp_path \(directory)/scgi;
                upstream menu {
            \(servers)
            \(keepalive > 0 ? "        keepalive \(keepalive);" : "")
                }
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://menu;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_next_upstream off;
                    }
                }
            }

            """
    }

    /// `text`, a deployment config, made to run here (see ``init(deploymentConfig:upstreams:)``):
    /// every `server 127.0.0.1:…;` line of its upstream replaced by `upstreams`, every `listen` by
    /// one on 127.0.0.1:`port`, `user` by root's when run as root (else dropped).
    static func deploymentConfig(_ text: String, directory: String, port: Int, upstreams: [Int]) -> String {
        var lines = ["daemon off;"]
        var upstreamWritten = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let directive = line.trimmingCharacters(in: .whitespaces)
            if directive.hasPrefix("server 127.0.0.1:") {
                if !upstreamWritten { lines += upstreams.map { "        server 127.0.0.1:\($0);" } }
                upstreamWritten = true
            } else if directive.hasPrefix("listen ") {
                if !lines.contains("        listen 127.0.0.1:\(port);") {
                    lines.append("        listen 127.0.0.1:\(port);")
                }
            } else if directive.hasPrefix("user ") {
                if geteuid() == 0 { lines.append("user root;") }
            } else {
                var kept = String(line)
                for prefix in ["/var/log/nginx/", "/var/lib/nginx/", "/run/"] {
                    kept = kept.replacingOccurrences(of: prefix, with: directory + "/")
                }
                lines.append(kept)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Whether a TCP connection to `port` succeeds, trying every 20 ms for 10 s while `child` runs.
    private static func awaitListening(port: Int, while child: ChildProcess) -> Bool {
        var listening = false
        _ = eventually(within: .seconds(10), every: .milliseconds(20)) {
            listening = child.isRunning && canConnect(port: port)
            return listening || !child.isRunning
        }
        return listening
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted now.
    package static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}

/// Why nginx could not be started, with what it said.
package struct NginxError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
