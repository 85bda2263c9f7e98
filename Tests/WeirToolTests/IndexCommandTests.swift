import Foundation
import Testing

/// `weir --index`: a seek table appended to multi-frame files, in place;
/// and the recipe of README for compressing one input on several machines
/// (GNU parallel), run locally.
@Suite("weir --index")
struct IndexCommandTests {
    @Test(
        """
        pzstd's file and a concatenation become seekable from their table; zstd -d decodes them the same; twice \
        changes nothing
        """
    )
    func indexes() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 3_000_000)
        let pzstd = try WeirProcess.run(
            ["-q", "-p", "2", "-1", "a", "-o", "p.zst"], in: scratch.url, executable: "/usr/bin/pzstd")
        #expect(pzstd.status == 0, "\(pzstd.stderr)")
        #expect(
            try WeirProcess.shell(
                "head -c 700000 a | $WEIR -q -B 64K > c.zst && tail -c +700001 a | $WEIR -q -B 64K >> c.zst",
                in: scratch.url
            ).status == 0)
        let before = try #require(scratch.data("p.zst"))
        let run = try WeirProcess.run(["--index", "p.zst", "c.zst"], in: scratch.url)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "p.zst: seek table of 4 frames (skippable ones included) appended (65 bytes; 2 frames decoded to "
                    + "measure them)"),
            "\(run.stderr)")
        // 11 + 36 frames of weir's, its two parts' tables.
        #expect(
            run.stderr.contains("c.zst: seek table of 49 frames (skippable ones included) appended (605 bytes)\n"),
            "\(run.stderr)")
        #expect(try #require(scratch.data("p.zst")).prefix(before.count) == before)
        for name in ["p.zst", "c.zst"] {
            #expect(try scratch.zstd(["-dc", name]).stdout == original, "\(name)")
            let list = try WeirProcess.run(["-lv", name], in: scratch.url)
            #expect(String(decoding: list.stdout, as: UTF8.self).contains("(from the seek table)"), "\(name)")
            let range = try WeirProcess.run(["-d", "--range=650000:+100000", name], in: scratch.url)
            #expect(range.stdout == original[650_000 ..< 750_000], "\(name)")
        }
        // Counted as the run that appended the table counted them (issue 67): its 4 entries, not 2 zstd frames.
        let again = try WeirProcess.run(["--index", "p.zst"], in: scratch.url)
        #expect(
            again.status == 0
                && again.stderr.contains(
                    "p.zst: already seekable (its seek table lists 4 frames, skippable ones included), unchanged"),
            "\(again.stderr)")
        #expect(try WeirProcess.run(["-q", "--index", "c.zst"], in: scratch.url).stderr.isEmpty)
    }

    @Test(
        """
        refused: standard input, --json, -c and -o, a file that is not zstd, a corrupt frame (the file unchanged, \
        exit 1)
        """
    )
    func refuses() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 300_000)
        #expect(try scratch.zstd(["-q", "--no-content-size", "-c", "a"], stdoutPath: "z.zst").status == 0)
        var damaged = try #require(scratch.data("z.zst"))
        damaged[damaged.count / 2] ^= 0x55
        try damaged.write(to: scratch.url.appendingPathComponent("bad.zst"))
        let stdin = try WeirProcess.shell("$WEIR --index < z.zst", in: scratch.url)
        #expect(stdin.status == 1 && stdin.stderr.contains("does not read standard input"), "\(stdin.stderr)")
        let json = try WeirProcess.run(["--index", "--json", "z.zst"], in: scratch.url)
        #expect(json.status == 1 && json.stderr.contains("--json"), "\(json.stderr)")
        for flags in [["-c"], ["-o", "out.zst"]] {
            let run = try WeirProcess.run(["--index"] + flags + ["z.zst"], in: scratch.url)
            #expect(run.status == 1 && run.stderr.contains("in place"), "\(flags): \(run.stderr)")
        }
        for name in ["a", "bad.zst"] {
            let before = scratch.data(name)
            let run = try WeirProcess.run(["--index", name], in: scratch.url)
            #expect(run.status == 1 && run.stderr.contains("weir: \(name): "), "\(run.stderr)")
            #expect(scratch.data(name) == before, "\(name)")
        }
        #expect(original.count == 300_000)
    }

    /// The table's size from a run's "seek table of N frames appended (B bytes" line.
    static func appendedBytes(_ stderr: String) -> Int? {
        guard let range = stderr.range(of: #"appended \((\d+) bytes"#, options: .regularExpression) else { return nil }
        return Int(stderr[range].dropFirst("appended (".count).prefix { $0.isNumber })
    }

    @Test(
        """
        a seek table the frames contradict is neither vouched for nor extended: exit 1, the frame named, the file \
        unchanged (issue 59)
        """
    )
    func refusesLyingTables() throws {
        let scratch = Scratch()
        // Frames without a size (the table alone sizes them), entry 0 1,000 too large.
        _ = try RangeCommandTests.lyingTable(scratch, change: 1000)
        // weir's frames declare their sizes: entry 0 +1,000 and entry 1 -1,000 contradict their headers.
        #expect(try WeirProcess.shell("seq 1 400000 | $WEIR -q -B256K > w.zst", in: scratch.url).status == 0)
        var lying = try #require(scratch.data("w.zst"))
        let entries = lying.count - 9 - 12 * Int(lying[lying.count - 9])
        lying.withUnsafeMutableBytes { bytes in
            for (entry, change) in [(0, 1000), (1, -1000)] {
                let at = entries + entry * 12 + 4
                let value = bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)
                bytes.storeBytes(of: UInt32(Int(value) + change), toByteOffset: at, as: UInt32.self)
            }
        }
        try lying.write(to: scratch.url.appendingPathComponent("w.zst"))
        let expected = [
            "s.zst": "weir: s.zst: corrupt seek table: frame 0 at offset 0 decodes to 2000000 bytes of content, "
                + "but its seek table entry lists 2001000; not indexed",
            "w.zst": "weir: w.zst: corrupt seek table: entry 0 lists 263144 bytes of content, but frame 0 at offset 0 "
                + "declares 262144; not indexed",
        ]
        for (name, message) in expected {
            let before = scratch.data(name)
            let run = try WeirProcess.run(["--index", name], in: scratch.url)
            #expect(run.status == 1 && run.stderr.contains(message), "\(name): \(run.stderr)")
            #expect(!run.stderr.contains("already seekable"), "\(name): \(run.stderr)")
            #expect(scratch.data(name) == before, "\(name)")
        }
    }

    @Test("a file another process holds locked is waited for, saying so; then indexed once")
    func waitsForLock() throws {
        let scratch = Scratch()
        scratch.text("a", size: 3_000_000)
        #expect(try WeirProcess.run(["-q", "-p", "2", "-1", "a", "-o", "p.zst"], in: scratch.url,
                                    executable: "/usr/bin/pzstd").status == 0)
        let before = try #require(scratch.data("p.zst"))
        // flock(1) holds the file until weir says it waits; no clock decides.
        let run = try WeirProcess.shell("""
            flock p.zst sh -c 'touch held; until grep -q busy err 2>/dev/null; do sleep 0.05; done' &
            until [ -e held ]; do sleep 0.05; done
            $WEIR --index p.zst 2> err; status=$?
            wait; cat err; exit $status
            """, in: scratch.url)
        #expect(run.status == 0, "\(run.stdout)")
        let stderr = String(decoding: run.stdout, as: UTF8.self)
        #expect(stderr.hasPrefix("p.zst: is busy (another weir --index?), waiting for it\n"), "\(stderr)")
        let bytes = try #require(Self.appendedBytes(stderr), "\(stderr)")
        #expect(scratch.data("p.zst")?.count == before.count + bytes)
    }

    @Test("two --index at once on one file: one appends the table, the other finds it; one table")
    func twoAtOnce() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 24_000_000)
        #expect(try WeirProcess.run(["-q", "-p", "2", "-1", "a", "-o", "p.zst"], in: scratch.url,
                                    executable: "/usr/bin/pzstd").status == 0)
        let before = try #require(scratch.data("p.zst"))
        let run = try WeirProcess.shell("""
            $WEIR --index p.zst 2> one & $WEIR --index p.zst 2> two; b=$?
            wait $!; a=$?; cat one two; exit $((a + b))
            """, in: scratch.url)
        let stderr = String(decoding: run.stdout, as: UTF8.self)
        #expect(run.status == 0, "\(stderr)")
        #expect(stderr.components(separatedBy: "seek table of").count == 2, "\(stderr)")
        #expect(stderr.components(separatedBy: "already seekable").count == 2, "\(stderr)")
        let bytes = try #require(Self.appendedBytes(stderr), "\(stderr)")
        #expect(scratch.data("p.zst")?.count == before.count + bytes)
        #expect(try scratch.zstd(["-dc", "p.zst"]).stdout == original)
    }

    /// README's recipe: GNU parallel cuts the file into blocks, weir
    /// compresses each, in order; the parts' tables chain, and --index
    /// makes one for every reader.
    @Test("GNU parallel --pipepart: the concatenated parts decode with zstd, list from their chain, and index")
    func parallelParts() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 3_000_000)
        let parallel = try WeirProcess.shell(
            "parallel --will-cite --pipepart -a a --block 500k -k -j 2 \"$WEIR\" -q -B 64K -c > a.zst", in: scratch.url)
        #expect(parallel.status == 0, "\(parallel.stderr)")
        #expect(try scratch.zstd(["-dc", "a.zst"]).stdout == original)
        let list = try WeirProcess.run(["-lv", "a.zst"], in: scratch.url)
        #expect(String(decoding: list.stdout, as: UTF8.self).contains("(from the seek table)"))
        let index = try WeirProcess.run(["--index", "a.zst"], in: scratch.url)
        #expect(index.status == 0 && index.stderr.contains("a.zst: seek table of"), "\(index.stderr)")
        #expect(try scratch.zstd(["-dc", "a.zst"]).stdout == original)
        let range = try WeirProcess.run(["-d", "--range=1999990:+30", "a.zst"], in: scratch.url)
        #expect(range.stdout == original[1_999_990 ..< 2_000_020])
        let decoded = try WeirProcess.run(["-dc", "a.zst"], in: scratch.url)
        #expect(decoded.stdout == original)
    }
}
