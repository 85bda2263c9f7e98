import Foundation
import Testing

/// A hostile tester's findings against issue 80's HTTP items (wt-hostile1):
/// each test fails on b91a34a.
@Suite("weir URL inputs from a lying server: found by a hostile tester")
struct RemoteHostileTests {
    /// Two Content-Encoding fields, `gzip` then `identity`, are one list
    /// (RFC 9110 5.3: "gzip, identity"): the body is gzip-coded and must be
    /// refused as `gzip/` is. b91a34a keeps the last field only, takes the
    /// body as the object's own bytes, and its gzip reader unwraps it:
    /// `-dc` writes the compressed .tar.zst as the content, exit 0.
    @Test("A coding split over two Content-Encoding fields (gzip, then identity) is refused")
    func codingInTwoFields() throws {
        let scratch = Scratch()
        let (servers, lying, _) = try RemoteLyingServerTests.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let url = "\(lying)/gzip2/a.tar.zst"
        for flags in [["-dc"], ["-t"], ["-d"]] {
            let result = try WeirProcess.run(flags + [url], in: scratch.url.appendingPathComponent("out"),
                                             environment: RemoteLyingServerTests.fast)
            RemoteLyingServerTests.refused(result, url, ["Content-Encoding", "gzip"])
            #expect(result.stdout.isEmpty || result.stdout != scratch.data("a.tar.zst"),
                    "\(flags): the compressed object written as its content")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).isEmpty)
    }
}

extension RemoteHostileTests {
    /// An object read as a stream (no seek table: here two frames from
    /// `zstd`), its GET cut at half; the resumption (`Range: bytes=N-`)
    /// answered 206 with fewer bytes than asked, `Content-Range: bytes
    /// N-B/SIZE` with B+1 the end of the first frame and SIZE the object's
    /// (a server may send less than asked: the rest is asked again). b91a34a
    /// ends the stream there: `-dc` writes the first frame's content only,
    /// exit 0; `-t` says OK; `-d` keeps the half file. The stream must reach
    /// the object's size (asking again from the byte reached) or fail.
    @Test("A resumed stream answered with fewer bytes than asked: never a shorter output with exit 0")
    func partialResumption() throws {
        let scratch = Scratch()
        let (servers, lying, _) = try RemoteLyingServerTests.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        let made = try WeirProcess.shell("""
            set -e
            head -c 1000000 /dev/urandom > p1
            seq 1 1000 > p2
            zstd -q -c p1 > f1.zst
            zstd -q -c p2 > f2.zst
            cat f1.zst f2.zst > root/two.zst
            cat p1 p2 > two
            stat -c %s f1.zst
            """, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        let boundary = Int(String(decoding: made.stdout, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines))!
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        for (run, flags) in [["-dc"], ["-t"], ["-d", "-o", "two.out"]].enumerated() {
            let url = "\(lying)/short206/two.zst?b=\(boundary)&run=\(run)"
            let result = try WeirProcess.run(flags + [url], in: scratch.url.appendingPathComponent("out"),
                                             environment: RemoteLyingServerTests.fast)
            if flags == ["-dc"] {
                let whole = scratch.data("two")?.count ?? 0
                #expect(result.status != 0 || result.stdout == scratch.data("two"),
                        "-dc: exit \(result.status), \(result.stdout.count) bytes of \(whole)")
            } else if flags == ["-t"] {
                #expect(result.status != 0, "-t passed a stream of half the object: \(result.stderr)")
            } else {
                let written = scratch.data("out/two.out")
                #expect(result.status != 0 && written == nil || written == scratch.data("two"),
                        "-d: exit \(result.status), \(written?.count ?? -1) bytes")
            }
        }
    }
}

extension RemoteHostileTests {
    /// `Content-Encoding : gzip` (whitespace between the field name and
    /// its colon): RFC 9112 5.1 says a client rejects such a response.
    /// Read as a field of another name, the gzipped body passed for the
    /// object; it must be refused, the line named.
    @Test("A header field with whitespace before its colon makes the answer refused")
    func spaceBeforeColon() throws {
        let scratch = Scratch()
        let (servers, lying, _) = try RemoteLyingServerTests.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let url = "\(lying)/spaced/a.tar.zst"
        for flags in [["-dc"], ["-t"], ["-d"], ["-l"]] {
            let result = try WeirProcess.run(flags + [url], in: scratch.url.appendingPathComponent("out"),
                                             environment: RemoteLyingServerTests.fast)
            RemoteLyingServerTests.refused(result, url, ["Content-Encoding : gzip", "RFC 9112 5.1"])
            #expect(result.stdout != scratch.data("a.tar.zst") && result.stdout != scratch.data("a.tar"), "\(flags)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).isEmpty)
    }

    /// A password in a redirect's Location of another scheme (`ftp://`) or
    /// without one (`//user:password@host/…`), and in `--json`'s `output`
    /// (a name given with `-o`), is shown as `***`.
    @Test("A password is never shown: a Location of any scheme or none, --json's output")
    func passwordsElsewhere() throws {
        let scratch = Scratch()
        let (servers, lying, _) = try RemoteLyingServerTests.servers(scratch)
        defer { withExtendedLifetime(servers) {} }
        let secret = "S3cr3tPassw0rd"
        for mode in ["ftpcred", "netloop"] {
            let url = "\(lying)/\(mode)/a.tar.zst"
            let result = try WeirProcess.run(["-dc", url], in: scratch.url, environment: RemoteLyingServerTests.fast)
            RemoteLyingServerTests.refused(result, url, ["weir:***@"])
            #expect(!result.stderr.contains(secret), "\(mode): \(result.stderr)")
        }
        scratch.text("f", size: 1000)
        try FileManager.default.createDirectory(atPath: scratch.path("http:/weir:\(secret)@h"),
                                                withIntermediateDirectories: true)
        let output = "http://weir:\(secret)@h/o.zst"
        let json = try WeirProcess.run(["-z", "f", "-o", output, "--json"], in: scratch.url)
        let text = String(decoding: json.stdout, as: UTF8.self) + json.stderr
        #expect(!text.contains(secret), "\(text)")
        #expect(text.contains("http://weir:***@h/o.zst"), "\(text)")
    }
}
