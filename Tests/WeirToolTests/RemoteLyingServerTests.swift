import Foundation
import Testing

/// URLs read from a server that lies (issue 80: items 4, 5, 6, 8, 11, 14),
/// the tests' own on 127.0.0.1 (Tests/Remote/lying-server.py) beside nginx:
/// a coded body, an object replaced under a weak ETag or none, a tail
/// answered with the wrong part, answers cut at half, redirects not
/// followed; and what a URL does to the command around it (an early exit,
/// the output's name, a password). No wrong byte with exit 0, and each
/// message says what the server did.
@Suite("weir URL inputs from a lying server")
struct RemoteLyingServerTests {
    static let fast = ["WEIR_HTTP_RETRY_PAUSE_MS": "5"]

    /// The archive of RemoteCommandTests (about 2.7 MB, served as
    /// `root/a.tar.zst`), and two versions of one object of the same size
    /// whose last MiB differs only in the seek table (`root/v.zst`, then
    /// `root/v.zst.v2`, which the lying server's `weak/` and `swap/` serve
    /// from the second request on): random first 640 KiB, the rest alike.
    static func servers(_ scratch: Scratch) throws -> (servers: RemoteServers, lying: String, log: String) {
        let servers = try RemoteCommandTests.archive(scratch)
        let made = try WeirProcess.shell("""
            set -e
            head -c 1600000 /dev/urandom > same
            for v in 1 2; do head -c 655360 /dev/urandom | cat - same > v$v; done
            $WEIR -q -B 64K v1 -o root/v.zst
            $WEIR -q -B 64K v2 -o root/v.zst.v2
            test "$(stat -c %s root/v.zst)" = "$(stat -c %s root/v.zst.v2)"
            """, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        let lying = try servers.lyingServer()
        return (servers, lying.url, lying.log)
    }

    /// Expects `result` to be exit 1 with one line on stderr, `weir: URL: …`, holding each of `words`.
    static func refused(_ result: WeirProcess.Result, _ url: String, _ words: [String],
                        sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 1 && !result.signaled, "\(result.stderr)", sourceLocation: sourceLocation)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("weir: \(url): "), "\(result.stderr)",
                sourceLocation: sourceLocation)
        for word in words {
            #expect(result.stderr.contains(word), "\(word): \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    @Test("A body coded (Content-Encoding: gzip) is refused; every request asks for identity")
    func codedBody() throws {
        let scratch = Scratch()
        let (servers, lying, log) = try Self.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        for mode in ["gzip", "gzip206"] {
            let url = "\(lying)/\(mode)/a.tar.zst"
            for flags in [["-dc"], ["-t"], ["-d"], ["-l"], ["-dc", "--member=src/f1.txt"]] {
                let result = try WeirProcess.run(flags + [url], in: scratch.url.appendingPathComponent("out"),
                                                 environment: Self.fast)
                Self.refused(result, url, ["Content-Encoding: gzip", "Accept-Encoding: identity"])
                // -l's header line comes before its first input is read.
                #expect(flags == ["-l"] || result.stdout.isEmpty, "\(mode) \(flags)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).isEmpty)
        let requests = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(!requests.isEmpty && requests.allSatisfy { $0.split(separator: " ")[2] == "identity" }, "\(requests)")
    }

    @Test("An object replaced under a weak ETag fails; with no validator, a seek table that stops matching fails")
    func replacedObject() throws {
        let scratch = Scratch()
        let (servers, lying, _) = try Self.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        for (run, flags) in [["-dc"], ["-d"], ["-t"]].enumerated() {
            // A query of its own: the server's count of requests starts again.
            let weak = "\(lying)/weak/v.zst?run=\(run)"
            let changed = try WeirProcess.run(flags + [weak], in: scratch.url.appendingPathComponent("out"),
                                              environment: Self.fast)
            Self.refused(changed, weak, ["the object changed while it was read", "W/\"1\"", "W/\"2\""])
            #expect(changed.stdout.isEmpty)
            let unmarked = "\(lying)/swap/v.zst?run=\(run)"
            let swapped = try WeirProcess.run(flags + [unmarked], in: scratch.url.appendingPathComponent("out"),
                                              environment: Self.fast)
            Self.refused(swapped, unmarked, ["seek table", "lists the checksum"])
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).isEmpty)
        // The truth: the same object, unchanged, is the file's.
        let plain = try WeirProcess.run(["-dc", "\(lying)/plain/v.zst"], in: scratch.url)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout == scratch.data("v1"))
    }

    @Test("An early exit with a URL argument, 200 times: exit 1 with its message, never a signal")
    func earlyExit() throws {
        let scratch = Scratch()
        // Fails before the URL is read (no suffix names the output), while libcurl loads on its thread.
        let result = try WeirProcess.shell("""
            for i in $(seq 1 200); do
              $WEIR -d http://127.0.0.1:9/x.txt 2> err; echo $? >> codes
              grep -q '^weir: http://127.0.0.1:9/x.txt: ' err || echo "$i: $(cat err)" >> messages
            done
            sort codes | uniq -c
            """, in: scratch.url, timeout: 600)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map {
            $0.split(separator: " ").map(String.init)
        } == [["200", "1"]], "exit statuses (count, status): \(String(decoding: result.stdout, as: UTF8.self))")
        #expect(!scratch.exists("messages"), "\(String(decoding: scratch.data("messages") ?? Data(), as: UTF8.self))")
    }

    @Test("A URL whose path has no last part names no output: refused, whatever its query; -o names it")
    func unnamedOutput() throws {
        let scratch = Scratch()
        let (servers, lying, _) = try Self.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        let host = String(lying.dropFirst("http://".count))
        // The folders the whole URL would name, as the old fallback took it: nothing may be made in them.
        let folder = "http:/\(host)/plain/a.tar.zst/?f="
        try FileManager.default.createDirectory(atPath: scratch.path("out/\(folder)"),
                                                withIntermediateDirectories: true)
        for url in ["\(lying)/plain/a.tar.zst/?f=/x.zst", "\(lying)/plain/a.tar.zst/?f=/../../../x.zst",
                    "\(lying)/plain/?name=a.tar.zst", lying, "\(lying)?a.tar.zst", "\(lying)/plain/..",
                    "\(lying)/plain/."] {
            let result = try WeirProcess.run(["-d", url], in: scratch.url.appendingPathComponent("out"))
            Self.refused(result, url, ["name the output with -o"])
        }
        let made = FileManager.default.enumerator(atPath: scratch.path("out"))?.allObjects as? [String] ?? []
        #expect(made.allSatisfy { !$0.hasSuffix("x") && !$0.hasSuffix(".tar") }, "\(made)")
        let named = try WeirProcess.run(["-d", "-q", "\(lying)/plain/a.tar.zst/?f=/x.zst", "-o", "named.tar"],
                                        in: scratch.url)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(scratch.data("named.tar") == scratch.data("a.tar"))
    }

    @Test("A URL's password is never shown: errors, -v, --json, --progress=json, -l, a mount's error")
    func passwords() throws {
        let scratch = Scratch()
        let (servers, lying, _) = try Self.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        let secret = "S3cr3tPassw0rd"
        let credentials = lying.replacingOccurrences(of: "http://", with: "http://weir:\(secret)@")
        let shown = lying.replacingOccurrences(of: "http://", with: "http://weir:***@")
        let runs: [[String]] = [
            ["-dc", "\(credentials)/plain/missing.tar.zst"], ["-t", "-v", "\(credentials)/plain/missing.tar.zst"],
            ["-t", "-v", "\(credentials)/plain/a.tar.zst"], ["-t", "--json", "\(credentials)/plain/a.tar.zst"],
            ["-t", "--json", "\(credentials)/plain/missing.tar.zst"],
            ["-t", "--progress=json", "\(credentials)/plain/a.tar.zst"],
            ["-t", "--progress=json", "\(credentials)/plain/missing.tar.zst"],
            ["-l", "-v", "\(credentials)/plain/a.tar.zst"], ["-l", "--json", "\(credentials)/plain/a.tar.zst"],
            ["-dc", "--member=src/f1.txt", "-v", "\(credentials)/gzip/a.tar.zst"],
            ["-d", "\(credentials)/plain/a.tar.zst/"], ["-dc", "\(credentials)/loop/a.tar.zst"],
            ["mount", "\(credentials)/plain/missing.tar.zst", "mnt"],
        ]
        try FileManager.default.createDirectory(atPath: scratch.path("mnt"), withIntermediateDirectories: true)
        var named = 0
        for arguments in runs {
            let result = try WeirProcess.run(arguments, in: scratch.url, environment: Self.fast)
            let text = String(decoding: result.stdout, as: UTF8.self) + result.stderr
            #expect(!text.contains(secret), "\(arguments): \(text)")
            if text.contains(shown) { named += 1 }
        }
        // Every run names the URL somewhere, without its password.
        #expect(named == runs.count, "\(named) of \(runs.count)")
    }

    @Test("The first request's lies: each message says what the server did; a tail cut at half resumes")
    func firstRequest() throws {
        let scratch = Scratch()
        let (servers, lying, log) = try Self.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        let cases: [(String, [String])] = [
            ("416", ["416", "Range: bytes=-1048576", "last 1048576 bytes"]),
            ("whole206", ["the whole object", "Content-Range: bytes 0-"]),
            ("elsewhere", ["another part", "Content-Range: bytes 0-1048575/"]),
            ("loop", ["redirected more than 20 times", "302"]),
            ("file", ["file:///etc/passwd", "not followed"]),
        ]
        for (mode, words) in cases {
            let url = "\(lying)/\(mode)/a.tar.zst"
            for flags in [["-dc"], ["-l"]] {
                let result = try WeirProcess.run(flags + [url], in: scratch.url, environment: Self.fast)
                Self.refused(result, url, words)
                #expect(!result.stderr.contains("changed") && !result.stderr.contains("Failed writing")
                    && !result.stderr.contains("ended early"), "\(mode): \(result.stderr)")
            }
        }
        // Every answer cut at half (its head promising the whole): each try gains bytes, and starts at the byte
        // reached, the tail's included; the bytes are the file's.
        try "".write(toFile: log, atomically: false, encoding: .utf8)
        let half = try WeirProcess.run(["-dc", "\(lying)/half/a.tar.zst"], in: scratch.url, environment: Self.fast)
        #expect(half.status == 0, "\(half.stderr)")
        #expect(half.stdout == scratch.data("a.tar"))
        let requests = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let tail = requests.filter { $0.contains(" bytes=") }.map { String($0.split(separator: " ")[1]) }
        #expect(tail.first == "bytes=-1048576", "\(requests)")
        #expect(tail.count == Set(tail).count, "a range asked twice: \(requests)")
    }

    @Test("""
          A stream cut where a gzip member, a copied input or a zstd frame ends, no resume possible: exit 1 \
          with the server's failure, nothing after the cut written, no output file left
          """)
    func streamCutAtBoundary() throws {
        let scratch = Scratch()
        let (servers, lying, _) = try Self.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        let made = try WeirProcess.shell("""
            set -e
            seq 1 20000 > one; seq 20001 40000 > two
            gzip -c one > root/two.gz; gzip -c two >> root/two.gz; gzip -c one | wc -c > gz.cut
            cat one two > root/plain.txt; wc -c < one > plain.cut
            $WEIR -q -c one > root/two.zst; $WEIR -q -c two >> root/two.zst; $WEIR -q -c one | wc -c > zst.cut
            """, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        let one = try #require(scratch.data("one"))
        for (name, cut, flags) in [("two.gz", "gz.cut", ["-dc"]), ("plain.txt", "plain.cut", ["-dcf"]),
                                   ("two.zst", "zst.cut", ["-dc"])] {
            let text = String(decoding: scratch.data(cut) ?? Data(), as: UTF8.self)
            let at = try #require(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), "\(cut): \(text)")
            let url = "\(lying)/cut/\(name)?b=\(at)"
            let result = try WeirProcess.run(flags + [url], in: scratch.url, environment: Self.fast)
            #expect(result.status == 1 && !result.signaled && result.stderr.contains("weir: \(url): ")
                        && result.stderr.contains("cannot be resumed"), "\(name): \(result.stderr)")
            // What came before the cut may be out (as zstd writes what it decoded), never a byte after it.
            #expect(one.starts(with: result.stdout), "\(name): \(result.stdout.count) bytes written")
            let file = try WeirProcess.run(flags.map { $0 == "-dc" ? "-d" : "-df" } + [url, "-o", "out"],
                                           in: scratch.url, environment: Self.fast)
            #expect(file.status == 1 && scratch.data("out") == nil, "\(name): \(file.stderr)")
        }
    }

    @Test("""
          A resumption answered without the ETag the first answer gave, or of an object whose only validator is \
          a weak ETag: refused, never two versions' bytes
          """)
    func resumptionWithoutETag() throws {
        let scratch = Scratch()
        let (servers, lying, _) = try Self.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        // Frames without a seek table (no table to catch a mix); the second version differs after frame 2.
        let made = try WeirProcess.shell("""
            set -e
            head -c 600000 /dev/urandom > p1; head -c 600000 /dev/urandom > p2; head -c 600000 /dev/urandom > p3
            zstd -q -c p1 > root/p.zst; zstd -q -c p2 >> root/p.zst; zstd -q -c p3 >> root/p.zst
            at=$(( $(zstd -q -c p1 | wc -c) + $(zstd -q -c p2 | wc -c) ))
            echo $at > at
            # Version 2: the same first two frames, then another valid frame and a skippable frame to the size.
            python3 - $at <<'PY'
            import struct, subprocess, sys
            at, data = int(sys.argv[1]), open("root/p.zst", "rb").read()
            other = subprocess.run(["zstd", "-q", "-c"], input=b"SECOND VERSION\\n" * 1000, capture_output=True).stdout
            pad = len(data) - at - len(other) - 8
            open("root/p.zst.v2", "wb").write(data[:at] + other + struct.pack("<II", 0x184D2A50, pad) + bytes(pad))
            PY
            """, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        let at = String(decoding: scratch.data("at") ?? Data(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let url = "\(lying)/noetag/p.zst?b=\(at)"
        let result = try WeirProcess.run(["-dc", url], in: scratch.url, environment: Self.fast)
        Self.refused(result, url, ["the object changed", "its ETag was \"1\", now none"])
        // A weak ETag tells versions apart only as wholes: the cut answer is not resumed (RFC 9110 15.3.7.3).
        let weak = "\(lying)/weakcut/p.zst?b=\(at)"
        let cut = try WeirProcess.run(["-dc", weak], in: scratch.url, environment: Self.fast)
        Self.refused(cut, weak, ["cut at offset \(at) and cannot be resumed", "only a weak ETag (W/\"1\")"])
    }
}
