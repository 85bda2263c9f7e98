import Foundation
import Testing

/// `weir -d` against the files real tools write.
@Suite("weir decompress")
struct DecompressCommandTests {
    @Test("decodes zstd, zstd -T2, pzstd and concatenated files; names the output from the suffix")
    func interoperability() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 3_000_000)
        try scratch.zstd(["-q", "-3", "in", "-o", "single.zst"])
        try scratch.zstd(["-q", "-T2", "in", "-o", "multi.zstd"])
        _ = try WeirProcess.run(["-p", "2", "-q", "in", "-o", "p.tzst"], in: scratch.url, executable: "/usr/bin/pzstd")
        for (file, output) in [("single.zst", "single"), ("multi.zstd", "multi"), ("p.tzst", "p.tar")] {
            let run = try WeirProcess.run(["-d", file], in: scratch.url)
            #expect(run.status == 0, "\(file): \(run.stderr)")
            #expect(scratch.data(output) == original, "\(file)")
        }
        let cat = try WeirProcess.shell("cat single.zst multi.zstd | $WEIR -dc | cmp - <(cat in in) && echo same", in: scratch.url)
        #expect(String(decoding: cat.stdout, as: UTF8.self) == "same\n", "\(cat.stderr)")
    }

    @Test("weir's own output round-trips through weir -d from a pipe")
    func roundTrip() throws {
        let scratch = Scratch()
        scratch.text("in", size: 5_000_000)
        let run = try WeirProcess.shell("$WEIR -q -c --chunk-size 1M in | $WEIR -q -d | cmp - in && echo same", in: scratch.url)
        #expect(String(decoding: run.stdout, as: UTF8.self) == "same\n", "\(run.stderr)")
    }

    @Test("a checksum mismatch fails, --no-check lets it through")
    func checksum() throws {
        let scratch = Scratch()
        let original = scratch.text("in", size: 50_000)
        try scratch.zstd(["-q", "in", "-o", "in.zst"])
        var bytes = [UInt8](scratch.data("in.zst")!)
        bytes[bytes.count - 1] ^= 0x01
        _ = FileManager.default.createFile(atPath: scratch.path("bad.zst"), contents: Data(bytes))
        let failed = try WeirProcess.run(["-d", "bad.zst"], in: scratch.url)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("weir: bad.zst: checksum mismatch"))
        #expect(!scratch.exists("bad"))
        let forced = try WeirProcess.run(["-d", "--no-check", "bad.zst"], in: scratch.url)
        #expect(forced.status == 0)
        #expect(scratch.data("bad") == original)
    }

    @Test("-t verifies without writing; -M refuses frames that need a bigger window")
    func testAndMemory() throws {
        let scratch = Scratch()
        scratch.text("in", size: 4_000_000)
        try scratch.zstd(["-q", "--long=25", "-1", "in", "-o", "long.zst"])
        let tested = try WeirProcess.run(["-t", "long.zst"], in: scratch.url)
        #expect(tested.status == 0, "\(tested.stderr)")
        #expect(scratch.names == ["in", "long.zst"])
        let limited = try WeirProcess.run(["-d", "-M", "1MiB", "long.zst", "-o", "out"], in: scratch.url)
        #expect(limited.status == 1)
        #expect(limited.stderr.contains("memory limit"))
        #expect(!scratch.exists("out"))
    }
}
