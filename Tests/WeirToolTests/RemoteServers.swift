import Foundation
import Glibc

/// The servers of the remote inputs' tests, on 127.0.0.1 at free ports,
/// stopped when the value goes: Debian's nginx serving `root` over HTTP
/// and over HTTPS (a certificate made here with openssl, which the client
/// is given through CURL_CA_BUNDLE), every request logged with its Range
/// and If-Match; `/forbidden/` answers 403, `/moved.tar.zst` redirects to `/a.tar.zst`. On demand, Python's
/// `http.server` on the same folder (a server without Range), the
/// tests' fault-injecting proxy (Tests/Remote/fault-proxy.py) in front of nginx,
/// and their lying server on the same folder (Tests/Remote/lying-server.py).
final class RemoteServers {
    let scratch: Scratch
    /// The folder served.
    let root: String
    let port: Int
    let tlsPort: Int
    private var processes: [Process] = []

    /// Starts nginx on `scratch`'s folder `root`.
    init(_ scratch: Scratch) throws {
        self.scratch = scratch
        root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root + "/forbidden", withIntermediateDirectories: true)
        port = Self.freePort()
        tlsPort = Self.freePort()
        let made = try WeirProcess.shell("""
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
              -addext subjectAltName=IP:127.0.0.1 -keyout key.pem -out cert.pem 2>/dev/null
            """, in: scratch.url)
        guard made.status == 0 else { throw Failure(what: "openssl: \(made.stderr)") }
        let folder = scratch.url.path
        let config = """
            daemon off;
            master_process off;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log;
            events {}
            http {
              log_format weir '$request_method $uri $status $body_bytes_sent "$http_range" "$http_if_match"';
              access_log \(folder)/access.log weir;
              client_body_temp_path \(folder)/t1; proxy_temp_path \(folder)/t2; fastcgi_temp_path \(folder)/t3;
              uwsgi_temp_path \(folder)/t4; scgi_temp_path \(folder)/t5;
              server {
                listen 127.0.0.1:\(port);
                listen 127.0.0.1:\(tlsPort) ssl;
                ssl_certificate \(folder)/cert.pem;
                ssl_certificate_key \(folder)/key.pem;
                root \(root);
                location /forbidden/ { deny all; }
                location = /moved.tar.zst { return 302 /a.tar.zst; }
              }
            }
            """
        try config.write(toFile: scratch.path("nginx.conf"), atomically: true, encoding: .utf8)
        try start("/usr/sbin/nginx", ["-c", scratch.path("nginx.conf"), "-e", scratch.path("error.log")], port: port)
    }

    deinit {
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var url: String { "http://127.0.0.1:\(port)" }
    var tlsURL: String { "https://127.0.0.1:\(tlsPort)" }
    /// The client's environment for the TLS server: the certificate made here.
    var trust: [String: String] { ["CURL_CA_BUNDLE": scratch.path("cert.pem"), "WEIR_HTTP_RETRY_PAUSE_MS": "5"] }

    /// nginx's requests so far, one line each (METHOD URI STATUS BYTES "RANGE" "IF-MATCH").
    /// nginx logs a request once it is done, which may be just after its
    /// client has all of it: a request of the test's own (to `/logged`) is
    /// awaited in the log first, after the ones before it (one process, one event loop).
    var requests: [String] {
        let marker = "GET /logged-\(UUID().uuidString)"
        _ = try? WeirProcess.shell("curl -s -o /dev/null '\(url)\(marker.dropFirst(4))'", in: scratch.url)
        var lines: [String] = []
        for _ in 0 ..< 200 {
            let log = (try? String(contentsOfFile: scratch.path("access.log"), encoding: .utf8)) ?? ""
            lines = log.split(separator: "\n").map(String.init)
            if lines.contains(where: { $0.hasPrefix(marker) }) { break }
            usleep(20_000)
        }
        return lines.filter { !$0.hasPrefix("GET /logged-") }
    }

    /// Forgets the requests logged so far.
    func clearLog() { try? "".write(toFile: scratch.path("access.log"), atomically: false, encoding: .utf8) }

    /// Starts Python's `http.server` on the folder served (no Range); returns its base URL.
    func plainServer() throws -> String {
        let port = Self.freePort()
        try start("/usr/bin/env", ["python3", "-m", "http.server", "--bind", "127.0.0.1", String(port),
                                   "--directory", root], port: port)
        return "http://127.0.0.1:\(port)"
    }

    /// Starts the fault proxy in front of nginx with `faults`
    /// (fault-proxy.py's); returns its base URL and its log's path.
    func faultProxy(_ faults: [String]) throws -> (url: String, log: String) {
        let port = Self.freePort()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Remote/fault-proxy.py").path
        let log = scratch.path("proxy-\(port).log")
        try start("/usr/bin/env", ["python3", script, String(port), url, log] + faults, port: port)
        return ("http://127.0.0.1:\(port)", log)
    }

    /// Starts the tests' lying server (Tests/Remote/lying-server.py) on the
    /// folder served: its base URL (each way of lying a path's first part)
    /// and its log's path.
    func lyingServer() throws -> (url: String, log: String) {
        let port = Self.freePort()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Remote/lying-server.py").path
        let log = scratch.path("lying-\(port).log")
        try start("/usr/bin/env", ["python3", script, String(port), root, log], port: port)
        return ("http://127.0.0.1:\(port)", log)
    }

    /// Starts `executable` and waits until `port` accepts connections.
    private func start(_ executable: String, _ arguments: [String], port: Int) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = scratch.url
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        processes.append(process)
        for _ in 0 ..< 600 {
            if Self.accepts(port) { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        throw Failure(what: "\(executable) \(arguments.joined(separator: " ")) did not listen on \(port)")
    }

    struct Failure: Error, CustomStringConvertible {
        let what: String
        var description: String { what }
    }

    /// A port no one listens on now (the kernel's choice for a socket bound to 0).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
