import Foundation
import Testing

/// `weir -d --range`: bytes of the decompressed content, from files (with
/// and without a seek table) and pipes, compared with slices of the original.
@Suite("weir -d --range")
struct RangeCommandTests {
    /// A text of `size` bytes compressed by weir in 64 KiB frames (with a
    /// seek table), by zstd (one frame) and by pzstd.
    func files(_ scratch: Scratch, size: Int = 1_000_000) throws -> Data {
        let original = scratch.text("a", size: size)
        #expect(try WeirProcess.run(["-q", "-B", "64K", "a", "-o", "weir.zst"], in: scratch.url).status == 0)
        #expect(try scratch.zstd(["-q", "a", "-o", "zstd.zst"]).status == 0)
        let pzstd = try WeirProcess.run(
            ["-q", "-p", "2", "a", "-o", "pzstd.zst"], in: scratch.url, executable: "/usr/bin/pzstd")
        #expect(pzstd.status == 0, "\(pzstd.stderr)")
        return original
    }

    /// Two frames of 2,000,000 bytes from pipes (no content size), indexed
    /// by weir; then the table's first entry `change` bytes off and the
    /// second as much the other way (the total kept). Returns the content.
    static func lyingTable(_ scratch: Scratch, change: Int) throws -> Data {
        let original = scratch.text("a", size: 4_000_000)
        let made = try WeirProcess.shell(
            """
            head -c 2000000 a | zstd -q > s.zst && tail -c +2000001 a | zstd -q >> s.zst && $WEIR -q --index s.zst &&
            python3 - <<'PY'
            import struct
            data = bytearray(open("s.zst", "rb").read())
            frames, descriptor = struct.unpack("<IB", data[-9:-4])
            size = 12 if descriptor & 0x80 else 8
            start = len(data) - 9 - frames * size
            for entry, change in ((0, \(change)), (1, -(\(change)))):
                at = start + entry * size + 4
                struct.pack_into("<I", data, at, struct.unpack_from("<I", data, at)[0] + change)
            open("s.zst", "wb").write(data)
            PY
            """, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        return original
    }

    @Test(
        """
        sizes only the seek table gives are taken; a frame that decodes to more or fewer bytes than its entry fails \
        the range (issue 59)
        """
    )
    func tableSizesCheckedWhenDecoded() throws {
        for change in [-5000, 5000] {
            let scratch = Scratch()
            let original = try Self.lyingTable(scratch, change: change)
            let listed = 2_000_000 + change
            // The boundary the table gives falls inside the range: frame 0 is
            // decoded to its end, which is not there; no byte is written.
            let lie =
                "weir: s.zst: corrupt seek table: frame 0 at offset 0 decodes to 2000000 bytes of content, "
                + "but its seek table entry lists \(listed)"
            for range in ["1990000:+20000", "0:"] {
                let run = try WeirProcess.run(["-d", "--range=\(range)", "s.zst"], in: scratch.url)
                #expect(run.status == 1 && run.stdout.isEmpty, "\(change) \(range): \(run.stdout.count) bytes")
                #expect(run.stderr.contains(lie), "\(change) \(range): \(run.stderr)")
            }
            // -t decodes every frame: the table is wrong, whatever a range saw.
            let test = try WeirProcess.run(["-t", "s.zst"], in: scratch.url)
            #expect(
                test.status == 1 && test.stderr.contains("corrupt seek table: entry 0 lists \(listed) bytes"),
                "\(test.stderr)")
            // A range inside frame 0: the frame is decoded to its end to be
            // checked before any byte goes out, and its size is checked too.
            let inside = try WeirProcess.run(["-d", "--range=1000:+1000", "s.zst"], in: scratch.url)
            #expect(inside.status == 1 && inside.stdout.isEmpty && inside.stderr.contains(lie), "\(inside.stderr)")
            // --no-check leaves the frame once the range is covered, as zstd's reader does.
            let unchecked = try WeirProcess.run(["-d", "--no-check", "--range=1000:+1000", "s.zst"], in: scratch.url)
            #expect(unchecked.status == 0 && unchecked.stdout == original[1000..<2000], "\(unchecked.stderr)")
        }
    }

    @Test("any ranges, in any order, from weir's, zstd's and pzstd's files: the same bytes as the slices")
    func fromFiles() throws {
        let scratch = Scratch()
        let original = try files(scratch)
        var generator = SystemRandomNumberGenerator()
        for name in ["weir.zst", "zstd.zst", "pzstd.zst"] {
            for _ in 0..<6 {
                let ranges = (0..<3).map { _ -> Range<Int> in
                    let start = Int.random(in: 0...original.count, using: &generator)
                    return start..<Int.random(in: start...min(original.count, start + 200_000), using: &generator)
                }
                let list = ranges.map { "\($0.lowerBound):\($0.upperBound)" }.joined(separator: ",")
                let run = try WeirProcess.run(["-d", "--range=\(list)", name], in: scratch.url)
                #expect(run.status == 0, "\(name) \(list): \(run.stderr)")
                let expected = ranges.reduce(Data()) { $0 + original[$1] }
                #expect(run.stdout == expected, "\(name) \(list)")
            }
            // Both ends, an open end, a length, size suffixes, repeated flags.
            let ends = try WeirProcess.run(["-d", "--range=:10", "--range=999990:,64K:+1K", name], in: scratch.url)
            #expect(ends.stdout == original[0..<10] + original[999_990...] + original[65536..<66560], "\(name)")
        }
    }

    @Test("from a pipe, in increasing order; decreasing ranges are refused there, not from a file")
    func fromPipe() throws {
        let scratch = Scratch()
        let original = try files(scratch)
        for name in ["weir.zst", "zstd.zst", "pzstd.zst"] {
            let run = try WeirProcess.shell(
                "cat \(name) | $WEIR -d --range=5:+100,300000:300010,999000:", in: scratch.url)
            #expect(run.status == 0, "\(name): \(run.stderr)")
            #expect(run.stdout == original[5..<105] + original[300_000..<300_010] + original[999_000...], "\(name)")
        }
        let backwards = try WeirProcess.shell("cat weir.zst | $WEIR -d --range=500:600,0:10", in: scratch.url)
        #expect(backwards.status == 1 && backwards.stderr.contains("increasing order"), "\(backwards.stderr)")
        let file = try WeirProcess.run(["-d", "--range=500:600,0:10", "weir.zst"], in: scratch.url)
        #expect(file.stdout == original[500..<600] + original[0..<10])
    }

    @Test("a range past the end: exit 1, the sizes named, nothing written from a file")
    func pastTheEnd() throws {
        let scratch = Scratch()
        _ = try files(scratch)
        let run = try WeirProcess.run(["-d", "--range=0:10,999999:+2", "weir.zst"], in: scratch.url)
        #expect(run.status == 1 && run.stdout.isEmpty, "\(run.stdout.count) bytes written")
        #expect(run.stderr.contains("999999:1000001 ends past the end of the content (1000000 bytes)"), "\(run.stderr)")
        let start = try WeirProcess.run(["-d", "--range=2M:", "zstd.zst"], in: scratch.url)
        #expect(start.status == 1 && start.stderr.contains("starts past the end"), "\(start.stderr)")
        let piped = try WeirProcess.shell("cat zstd.zst | $WEIR -d --range=999999:+2", in: scratch.url)
        #expect(piped.status == 1 && piped.stderr.contains("past the end"), "\(piped.stderr)")
    }

    @Test("-o writes the bytes to a file (refusing an existing one without -f); -t decodes only; --json counts frames")
    func outputsAndTests() throws {
        let scratch = Scratch()
        let original = try files(scratch)
        #expect(
            try WeirProcess.run(["-d", "--range=100:+70000", "weir.zst", "-o", "part"], in: scratch.url).status == 0)
        #expect(scratch.data("part") == original[100..<70100])
        let again = try WeirProcess.run(["-d", "--range=0:1", "weir.zst", "-o", "part"], in: scratch.url)
        #expect(again.status == 1 && again.stderr.contains("already exists"), "\(again.stderr)")
        #expect(
            try WeirProcess.run(["-d", "-f", "--range=0:1", "weir.zst", "-o", "part"], in: scratch.url).status == 0)
        #expect(scratch.data("part") == original[0..<1])

        let tested = try WeirProcess.run(["-t", "--range=60000:+10000", "weir.zst"], in: scratch.url)
        #expect(tested.status == 0 && tested.stdout.isEmpty, "\(tested.stderr)")
        let json = try WeirProcess.run(["-d", "--json", "--range=60000:+10000", "weir.zst"], in: scratch.url)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stderr.utf8)) as? [String: Any])
        #expect(object["frames"] as? Int == 2 && object["bytes_out"] as? Int == 10_000, "\(json.stderr)")

        // A damaged frame inside the range fails the test; one outside it is not read.
        var bytes = try #require(scratch.data("weir.zst"))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: scratch.url.appendingPathComponent("bad.zst"))
        #expect(try WeirProcess.run(["-t", "--range=0:+\(original.count)", "bad.zst"], in: scratch.url).status == 1)
        #expect(try WeirProcess.run(["-t", "--range=0:+1000", "bad.zst"], in: scratch.url).status == 0)
        // Written to a file, a failure leaves nothing under its name, as every weir output.
        let failed = try WeirProcess.run(
            ["-d", "--range=0:+\(original.count)", "bad.zst", "-o", "cut"], in: scratch.url)
        #expect(failed.status == 1 && !scratch.exists("cut"), "\(failed.stderr)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).filter {
            $0.hasPrefix(".weir-")
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test("--range needs -d or -t, one input, and valid lists")
    func refused() throws {
        let scratch = Scratch()
        _ = try files(scratch, size: 10_000)
        for arguments in [
            ["--range=0:1", "a"], ["-d", "--range=5:1", "weir.zst"], ["-d", "--range=x", "weir.zst"],
            ["-d", "--rm", "--range=0:1", "weir.zst"], ["-d", "--range=0:1", "weir.zst", "zstd.zst"],
        ] {
            let run = try WeirProcess.run(arguments, in: scratch.url)
            #expect(run.status == 1 && run.stderr.contains("range"), "\(arguments): \(run.stderr)")
        }
    }

    @Test("a range that ends inside a damaged frame: nothing of that frame is written, exit 1; --no-check lets it by")
    func endsInsideDamagedFrame() throws {
        let scratch = Scratch()
        // 3 MiB of random bytes in 1 MiB frames (raw blocks); one byte of
        // frame 0's content flipped: only its checksum tells.
        _ = try FormatsCommandTests.sh("head -c 3145728 /dev/urandom > a && $WEIR -q -B1M a -o a.zst", scratch)
        var bytes = try #require(scratch.data("a.zst"))
        bytes[500_000] ^= 0xFF
        _ = FileManager.default.createFile(atPath: scratch.path("bad.zst"), contents: bytes)
        let original = try #require(scratch.data("a"))
        for line in [
            "$WEIR -d -c --range=0:+600000 bad.zst", "cat bad.zst | $WEIR -d -c --range=0:+600000",
            "$WEIR -t --range=0:+600000 bad.zst", "cat bad.zst | $WEIR -t --range=0:+600000",
        ] {
            let run = try WeirProcess.shell(line, in: scratch.url)
            #expect(run.status == 1 && run.stdout.isEmpty, "\(line): exit \(run.status), \(run.stdout.count) bytes")
            let named = line.hasPrefix("cat") ? "weir: (stdin): " : "weir: bad.zst: "
            #expect(
                run.stderr.hasPrefix(named) && run.stderr.contains("checksum mismatch")
                    && run.stderr.contains("offset"), "\(line): \(run.stderr)")
        }
        // A range in an intact frame is served; --no-check serves the damaged one, as zstd does.
        for line in ["$WEIR -d -c --range=1048576:+600000 bad.zst", "cat a.zst | $WEIR -d -c --range=1048576:+600000"] {
            let run = try WeirProcess.shell(line, in: scratch.url)
            let right = run.stdout == original[1_048_576..<1_648_576]
            #expect(run.status == 0 && right, "\(line): \(run.stderr)")
        }
        for line in [
            "$WEIR -d -c --no-check --range=0:+600000 bad.zst",
            "cat bad.zst | $WEIR -d -c --no-check --range=0:+600000",
        ] {
            let run = try WeirProcess.shell(line, in: scratch.url)
            #expect(run.status == 0 && run.stdout.count == 600_000, "\(line): \(run.stderr)")
        }
    }
}