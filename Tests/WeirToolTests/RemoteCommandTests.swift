import Foundation
import Testing

/// URLs as inputs (docs/remote.md): `-l`, `-lv`, `-l --members`,
/// `-d --member`, `--range`, `-t`, `-d` and `-dc` of an archive on Debian's
/// nginx at 127.0.0.1, over HTTP and HTTPS, every byte compared with the
/// same command on the local file; requests counted from nginx's log;
/// failures from a server without Range (Python's http.server) and from the
/// tests' fault-injecting proxy.
@Suite("weir URL inputs")
struct RemoteCommandTests {
    /// A tar of 60 text files of 10–110 KB (about 3.6 MB), compressed by
    /// weir in 64 KiB frames into the served folder (`root/a.tar.zst`), beside `a.tar`.
    static func archive(_ scratch: Scratch) throws -> RemoteServers {
        let servers = try RemoteServers(scratch)
        let made = try WeirProcess.shell("""
            set -e
            mkdir src
            for i in $(seq 1 60); do head -c $((8000 + i * 1200)) /dev/urandom | base64 > src/f$i.txt; done
            tar --sort=name -cf a.tar src
            $WEIR -q -B 64K a.tar -o root/a.tar.zst
            """, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        return servers
    }

    /// Runs `arguments` with the URL of `a.tar.zst` and with the local file
    /// in its place; expects both to succeed with the same stdout.
    static func same(_ arguments: [String], _ servers: RemoteServers, base: String? = nil,
                     environment: [String: String] = [:]) throws -> WeirProcess.Result {
        let url = (base ?? servers.url) + "/a.tar.zst"
        let remote = try WeirProcess.run(arguments + [url], in: servers.scratch.url, environment: environment)
        let local = try WeirProcess.run(arguments + ["root/a.tar.zst"], in: servers.scratch.url)
        #expect(remote.status == 0, "\(arguments): \(remote.stderr)")
        #expect(local.status == 0, "\(arguments): \(local.stderr)")
        #expect(remote.stdout == local.stdout, "\(arguments): the URL's output differs from the file's")
        return remote
    }

    @Test("-l --members and -lv --members of a URL are the file's, from at most 2 requests")
    func membersListing() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        for flags in [["-l", "--members"], ["-lv", "--members"]] {
            servers.clearLog()
            let result = try Self.same(flags, servers)
            #expect(!result.stdout.isEmpty)
            #expect(servers.requests.count <= 2, "\(servers.requests)")
        }
    }

    @Test("-l and -lv of a URL list the file's frames, from at most 2 requests each")
    func framesListing() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        servers.clearLog()
        let url = servers.url + "/a.tar.zst"
        let remote = try WeirProcess.run(["-l", url], in: scratch.url)
        let local = try WeirProcess.run(["-l", "root/a.tar.zst"], in: scratch.url)
        #expect(remote.status == 0, "\(remote.stderr)")
        #expect(servers.requests.count <= 2, "\(servers.requests)")
        // The row without the name: frames, skips, sizes, ratio, check.
        let row = { (result: WeirProcess.Result) in
            String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")[1].split(separator: " ").dropLast()
        }
        #expect(row(remote) == row(local))
        let remoteFrames = try WeirProcess.run(["-lv", url], in: scratch.url)
        let localFrames = try WeirProcess.run(["-lv", "root/a.tar.zst"], in: scratch.url)
        #expect(remoteFrames.status == 0, "\(remoteFrames.stderr)")
        #expect(servers.requests.count <= 4, "\(servers.requests)")
        // zstd's block (the last frame's window read from its header) and the frame rows, after the name.
        let lines = { (result: WeirProcess.Result) in
            String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").dropFirst()
        }
        #expect(lines(remoteFrames).count > 10)
        #expect(lines(remoteFrames) == lines(localFrames))
    }

    @Test("-d --member of a URL writes the file's tar stream, in at most 3 requests, the later ones If-Match")
    func member() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        // The archive's first files lie far from its last MiB.
        let names = try WeirProcess.shell("tar tf a.tar", in: scratch.url).stdout
        for member in String(decoding: names, as: UTF8.self).split(separator: "\n")[1 ... 2] {
            servers.clearLog()
            let result = try Self.same(["-dc", "--member=\(member)"], servers)
            #expect(result.stdout.count > 8000)
            let requests = servers.requests
            #expect(requests.count <= 3 && requests.count >= 2, "\(member): \(requests)")
            #expect(requests.dropFirst().allSatisfy { !$0.hasSuffix("\"-\"") }, "\(requests)")
        }
    }

    @Test("--range of a URL gives the file's bytes")
    func ranges() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        _ = try Self.same(["-dc", "--range=1000:90000,700000:+5000"], servers)
    }

    @Test("-dc and -t of a URL stream it; -d names the output as for a file, in the current folder")
    func wholeArchive() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        let streamed = try WeirProcess.run(["-dc", servers.url + "/a.tar.zst"], in: scratch.url)
        #expect(streamed.status == 0, "\(streamed.stderr)")
        #expect(streamed.stdout == scratch.data("a.tar"))
        let tested = try WeirProcess.run(["-t", servers.url + "/a.tar.zst"], in: scratch.url)
        #expect(tested.status == 0, "\(tested.stderr)")
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let written = try WeirProcess.run(["-d", "-q", servers.url + "/a.tar.zst?x=1"],
                                          in: scratch.url.appendingPathComponent("out"))
        #expect(written.status == 0, "\(written.stderr)")
        #expect(scratch.data("out/a.tar") == scratch.data("a.tar"))
    }

    @Test("over HTTPS with CURL_CA_BUNDLE: the file's member; without it, one line naming the URL, exit 1")
    func tls() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        _ = try Self.same(["-dc", "--member=src/f5.txt"], servers, base: servers.tlsURL, environment: servers.trust)
        let untrusted = try WeirProcess.run(["-l", "--members", servers.tlsURL + "/a.tar.zst"], in: scratch.url,
                                            environment: ["CURL_CA_BUNDLE": "/etc/ssl/certs/ca-certificates.crt"])
        #expect(untrusted.status == 1)
        let lines = untrusted.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("weir: \(servers.tlsURL)/a.tar.zst: "), "\(untrusted.stderr)")
        #expect(untrusted.stderr.contains("SSL") || untrusted.stderr.contains("certificate"))
    }

    @Test("A redirect is followed; http_proxy from the environment is the proxy asked")
    func redirectAndProxy() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        let local = try WeirProcess.run(["-dc", "--member=src/f2.txt", "root/a.tar.zst"], in: scratch.url)
        let moved = try WeirProcess.run(["-dc", "--member=src/f2.txt", servers.url + "/moved.tar.zst"],
                                        in: scratch.url)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stdout == local.stdout)
        // The fault proxy without faults forwards a proxy's request (its absolute URL) to nginx.
        let proxy = try servers.faultProxy([])
        let proxied = try WeirProcess.run(["-dc", "--member=src/f2.txt", servers.url + "/a.tar.zst"], in: scratch.url,
                                          environment: ["http_proxy": proxy.url, "no_proxy": ""])
        #expect(proxied.status == 0, "\(proxied.stderr)")
        #expect(proxied.stdout == local.stdout)
        let log = try String(contentsOfFile: proxy.log, encoding: .utf8).split(separator: "\n")
        #expect(log.count == 2, "\(log)")
    }

    @Test("404 and 403: one line naming the URL and the status, exit 1, for each reading")
    func errorStatuses() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        try FileManager.default.copyItem(atPath: scratch.path("root/a.tar.zst"),
                                         toPath: scratch.path("root/forbidden/a.tar.zst"))
        for (path, status) in [("/missing.tar.zst", "404 Not Found"), ("/forbidden/a.tar.zst", "403 Forbidden")] {
            for flags in [["-l"], ["-l", "--members"], ["-dc", "--member=src/f1.txt"], ["-dc"], ["-t"]] {
                let url = servers.url + path
                let result = try WeirProcess.run(flags + [url], in: scratch.url)
                #expect(result.status == 1)
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 1 && lines[0] == "weir: \(url): the server answered \(status)",
                        "\(flags): \(result.stderr)")
            }
        }
    }

    @Test("A server without Range: --member and --range say it cannot serve parts; -dc streams it")
    func serverWithoutRanges() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        let plain = try servers.plainServer()
        for flags in [["-dc", "--member=src/f1.txt"], ["-dc", "--range=0:100"], ["-l", "--members"]] {
            let result = try WeirProcess.run(flags + [plain + "/a.tar.zst"], in: scratch.url)
            #expect(result.status == 1)
            #expect(result.stderr.contains("the server cannot serve parts of it"), "\(flags): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        let streamed = try WeirProcess.run(["-dc", plain + "/a.tar.zst"], in: scratch.url)
        #expect(streamed.status == 0, "\(streamed.stderr)")
        #expect(streamed.stdout == scratch.data("a.tar"))
    }

    @Test("A 503, a short body, a reset, a stall: retried from the byte reached, the bytes the file's")
    func retries() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        let fast = ["WEIR_HTTP_RETRY_PAUSE_MS": "5"]
        for fault in ["503:2", "short:2", "drop:2"] {
            let proxy = try servers.faultProxy([fault])
            _ = try Self.same(["-dc", "--member=src/f2.txt"], servers, base: proxy.url, environment: fast)
            let log = try String(contentsOfFile: proxy.log, encoding: .utf8).split(separator: "\n")
            #expect(log.count == 3, "\(fault): \(log)")
            if fault != "503:2" {
                // Resumed: the third request starts past the second's start.
                let starts = log.dropFirst().map { $0.split(separator: " ")[2] }
                #expect(starts[0] != starts[1], "\(fault): \(log)")
            }
        }
        // The first request (the archive's last MiB) is retried as the others are.
        for fault in ["503:1", "drop:1"] {
            let proxy = try servers.faultProxy([fault])
            _ = try Self.same(["-dc", "--member=src/f2.txt"], servers, base: proxy.url, environment: fast)
            let log = try String(contentsOfFile: proxy.log, encoding: .utf8).split(separator: "\n")
            #expect(log.count == 3, "\(fault): \(log)")
        }
        // A stall: no byte for WEIR_HTTP_STALL_SECONDS is a timeout, retried from the byte reached.
        for fault in ["short:1", "drop:1", "stall:1"] {
            let proxy = try servers.faultProxy([fault])
            let streamed = try WeirProcess.run(["-dc", proxy.url + "/a.tar.zst"], in: scratch.url,
                                               environment: fast.merging(["WEIR_HTTP_STALL_SECONDS": "1"]) { $1 })
            #expect(streamed.status == 0, "\(fault): \(streamed.stderr)")
            #expect(streamed.stdout == scratch.data("a.tar"), "\(fault)")
            if fault == "stall:1" {
                // The retry came while the first answer still stalled: the client timed out.
                let log = try String(contentsOfFile: proxy.log, encoding: .utf8).split(separator: "\n")
                #expect(log.count >= 2 && log[1].hasPrefix("2 GET "), "\(log)")
            }
        }
    }

    @Test("503s that stay: an error after the retries, member or stream; a changed ETag fails; nothing written")
    func failuresThatStay() throws {
        let scratch = Scratch()
        let servers = try Self.archive(scratch)
        let fast = ["WEIR_HTTP_RETRY_PAUSE_MS": "5"]
        let unavailable = try servers.faultProxy(["503:2+"])
        let url = unavailable.url + "/a.tar.zst"
        let failed = try WeirProcess.run(["-dc", "--member=src/f2.txt", url], in: scratch.url, environment: fast)
        #expect(failed.status == 1)
        #expect(failed.stderr == "weir: \(url): the server answered 503 Service Unavailable (after 6 tries)\n")
        let changed = try servers.faultProxy(["etag:2"])
        let replaced = try WeirProcess.run(["-d", "--member=src/f2.txt", "-o", "out.tar", changed.url + "/a.tar.zst"],
                                           in: scratch.url, environment: fast)
        #expect(replaced.status == 1)
        #expect(replaced.stderr.contains("the object changed while it was read"), "\(replaced.stderr)")
        #expect(!scratch.exists("out.tar"))
        // A stream cut, then 503s: what the server said, not the truncated input; no output left.
        let cut = try servers.faultProxy(["drop:1", "503:2+"])
        try FileManager.default.createDirectory(atPath: scratch.path("cut"), withIntermediateDirectories: true)
        let stream = cut.url + "/a.tar.zst"
        let ended = try WeirProcess.run(["-d", stream], in: scratch.url.appendingPathComponent("cut"),
                                        environment: fast)
        #expect(ended.status == 1)
        #expect(ended.stderr == "weir: \(stream): the server answered 503 Service Unavailable (after 6 tries)\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path("cut"))
        #expect(left.isEmpty, "\(left)")
    }

    @Test("Without libcurl (an empty file where the loader finds it): a URL is one line naming it, exit 1")
    func missingLibcurl() throws {
        let scratch = Scratch()
        // A mount namespace of its own: the empty file hides libcurl.so.4 from this command alone.
        let result = try WeirProcess.shell("""
            set -e
            head -c 100000 /dev/urandom > f
            $WEIR -q f -o f.zst
            : > empty
            library=$(ldconfig -p | awk '$1 == "libcurl.so.4" && /x86-64/ { print $NF; exit }')
            test -n "$library"
            unshare -m --propagation private sh -c "mount --bind empty $library
                $WEIR -l http://127.0.0.1:9/a.tar.zst 2> url.err; echo \\$? > url.status
                $WEIR -dc f.zst > f.out; echo \\$? > file.status"
            """, in: scratch.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(String(decoding: scratch.data("url.status") ?? Data(), as: UTF8.self) == "1\n")
        let message = String(decoding: scratch.data("url.err") ?? Data(), as: UTF8.self)
        let lines = message.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("weir: http://127.0.0.1:9/a.tar.zst: "), "\(message)")
        #expect(message.contains("cannot load libcurl"), "\(message)")
        #expect(String(decoding: scratch.data("file.status") ?? Data(), as: UTF8.self) == "0\n")
        #expect(scratch.data("f.out") == scratch.data("f"))
    }
}
