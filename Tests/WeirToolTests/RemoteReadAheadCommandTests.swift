import Foundation
import Testing

/// `-d URL`, `-dc URL` and `-t URL` of a seekable archive on a server that
/// serves ranges (docs/remote.md, "From start to end"): the object read
/// ahead by range requests several at once, decoded as a file; every byte
/// compared with the local file, requests counted from nginx's log, faults
/// from the tests' proxy in one of the parallel ranges, memory measured on
/// two sizes.
@Suite("weir URL inputs read ahead")
struct RemoteReadAheadCommandTests {
    /// nginx's log lines of the range requests for the archive after its tail's.
    static func blockRequests(_ servers: RemoteServers) -> [String] {
        servers.requests.filter { $0.contains("/a.tar.zst") && !$0.contains("\"bytes=-") }
    }

    @Test("-dc URL gives the file's bytes over HTTP and HTTPS, by several range requests, each If-Match")
    func bytesAndRequests() throws {
        let scratch = Scratch()
        let servers = try RemoteCommandTests.archive(scratch)
        let file = try #require(scratch.data("a.tar"))
        for (base, environment) in [(servers.url, [String: String]()), (servers.tlsURL, servers.trust)] {
            servers.clearLog()
            let result = try WeirProcess.run(["-dc", base + "/a.tar.zst"], in: scratch.url, environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == file, "\(base)")
            let requests = servers.requests
            // The tail (its last MiB), then the blocks before it: about an eighth of the archive each.
            #expect(requests.first?.contains("\"bytes=-1048576\"") == true, "\(requests)")
            let blocks = Self.blockRequests(servers)
            #expect(blocks.count >= 3 && blocks.count <= 9, "\(requests)")
            #expect(requests.count == blocks.count + 1, "\(requests)")
            #expect(blocks.allSatisfy { $0.contains(" 206 ") && !$0.hasSuffix("\"-\"") }, "\(blocks)")
        }
        // -t reads it so too, and -d writes it beside, with a mode of its own (not a made-up status's).
        servers.clearLog()
        let tested = try WeirProcess.run(["-t", servers.url + "/a.tar.zst"], in: scratch.url)
        #expect(tested.status == 0, "\(tested.stderr)")
        #expect(Self.blockRequests(servers).count >= 3)
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let written = try WeirProcess.run(["-d", "-q", servers.url + "/a.tar.zst"],
                                          in: scratch.url.appendingPathComponent("out"))
        #expect(written.status == 0, "\(written.stderr)")
        #expect(scratch.data("out/a.tar") == file)
        let attributes = try FileManager.default.attributesOfItem(atPath: scratch.path("out/a.tar"))
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o200 != 0 } == true, "\(attributes)")
        let modified = try #require(attributes[.modificationDate] as? Date)
        #expect(modified.timeIntervalSinceNow > -600)
    }

    /// The GET carries the tail's identity (If-Match): the stream must be
    /// the object the tail was, and end at its size.
    @Test("An archive without a seek table is streamed: one plain GET after the tail's")
    func withoutTable() throws {
        let scratch = Scratch()
        let servers = try RemoteCommandTests.archive(scratch)
        let made = try WeirProcess.shell("zstd -q -3 a.tar -o root/b.tar.zst", in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        servers.clearLog()
        let result = try WeirProcess.run(["-dc", servers.url + "/b.tar.zst"], in: scratch.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == scratch.data("a.tar"))
        let requests = servers.requests
        #expect(requests.count == 2 && requests[1].contains(" \"-\" ") && !requests[1].hasSuffix(" \"-\""),
                "\(requests)")
    }

    @Test("A 503, a reset, a short body in one of the parallel ranges: retried, the bytes the file's")
    func faultsInARange() throws {
        let scratch = Scratch()
        let servers = try RemoteCommandTests.archive(scratch)
        let file = try #require(scratch.data("a.tar"))
        let fast = ["WEIR_HTTP_RETRY_PAUSE_MS": "5"]
        let clean = try servers.faultProxy([])
        let baseline = try WeirProcess.run(["-dc", clean.url + "/a.tar.zst"], in: scratch.url)
        #expect(baseline.stdout == file)
        let requests = try String(contentsOfFile: clean.log, encoding: .utf8).split(separator: "\n").count
        // Request 1 is the tail; 3 is one of the blocks fetched at once: it alone is made again.
        for fault in ["503:3", "drop:3", "short:3"] {
            let proxy = try servers.faultProxy([fault])
            let result = try WeirProcess.run(["-dc", proxy.url + "/a.tar.zst"], in: scratch.url, environment: fast)
            #expect(result.status == 0, "\(fault): \(result.stderr)")
            #expect(result.stdout == file, "\(fault)")
            let log = try String(contentsOfFile: proxy.log, encoding: .utf8).split(separator: "\n")
            #expect(log.count == requests + 1, "\(fault): \(log)")
            #expect(log.dropFirst().allSatisfy { $0.split(separator: " ")[3] != "-" }, "\(fault): \(log)")
        }
    }

    @Test("A changed ETag in one of the parallel ranges fails the read: one line, exit 1, nothing wrong written")
    func changedMidRead() throws {
        let scratch = Scratch()
        let servers = try RemoteCommandTests.archive(scratch)
        let file = try #require(scratch.data("a.tar"))
        let fast = ["WEIR_HTTP_RETRY_PAUSE_MS": "5"]
        let changed = try servers.faultProxy(["etag:4"])
        let url = changed.url + "/a.tar.zst"
        let streamed = try WeirProcess.run(["-dc", url], in: scratch.url, environment: fast)
        #expect(streamed.status == 1)
        #expect(streamed.stderr.hasPrefix("weir: \(url): the object changed while it was read"), "\(streamed.stderr)")
        #expect(streamed.stderr.split(separator: "\n").count == 1, "\(streamed.stderr)")
        #expect(streamed.stdout.count < file.count && file.starts(with: streamed.stdout))
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let again = try servers.faultProxy(["etag:4"])
        let written = try WeirProcess.run(["-d", again.url + "/a.tar.zst"],
                                          in: scratch.url.appendingPathComponent("out"), environment: fast)
        #expect(written.status == 1)
        #expect(written.stderr.contains("the object changed while it was read"), "\(written.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).isEmpty)
    }

    @Test("-d URL stopped keeps nothing: its output is not resumed (a file's would be kept as .part)")
    func notResumed() throws {
        let scratch = Scratch()
        let servers = try RemoteCommandTests.archive(scratch)
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let stopped = try WeirProcess.shell("""
            cd out
            WEIR_TEST_FRAME_DELAY=0.1 $WEIR -d \(servers.url)/a.tar.zst & pid=$!
            for i in $(seq 1200); do
                [ "$(stat -c %s .weir-* 2>/dev/null | sort -n | tail -1)" -gt 0 ] 2>/dev/null && break
                sleep 0.05
            done
            sleep 0.5; kill -TERM $pid; wait $pid; echo "status $?" >&2
            """, in: scratch.url, timeout: 300)
        #expect(stopped.stderr.contains("status 143"), "\(stopped.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path("out"))
        #expect(left.isEmpty, "\(left)")
    }

    @Test("Peak memory of -dc URL does not grow with the archive: 32 MB and 128 MB within 8 MiB")
    func memoryFlat() throws {
        let scratch = Scratch()
        let servers = try RemoteServers(scratch)
        var peaks: [Int] = []
        for megabytes in [32, 128] {
            // Random bytes: the archive is as large as its content, read in the largest blocks.
            let result = try WeirProcess.shell("""
                set -e
                head -c \(megabytes)M /dev/urandom > big
                $WEIR -q -f -1 big -o root/a.tar.zst
                /usr/bin/time -f %M -o peak $WEIR -dc \(servers.url)/a.tar.zst | cmp - big
                cat peak
                """, in: scratch.url, timeout: 300)
            #expect(result.status == 0, "\(result.stderr)")
            let printed = String(decoding: result.stdout, as: UTF8.self)
            peaks.append(Int(printed.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1)
        }
        #expect(peaks.allSatisfy { $0 > 0 } && peaks[1] <= peaks[0] + 8 * 1024, "peak RSS in KiB: \(peaks)")
    }
}
