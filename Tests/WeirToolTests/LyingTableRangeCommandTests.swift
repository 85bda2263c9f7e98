import Foundation
import Testing

/// Opening a seekable file reads its footer and seek table, not a frame
/// header per frame (issue 71): `--range` and `--member` take the table as
/// the seekable format's readers do, and check every frame they decode
/// against its entry — its header, its size, its checksum — before any of
/// its bytes go out. A table that lies about a frame a read touches is
/// refused with the file, the frame and its offset, and nothing is written.
@Suite("the seek table taken at open, each decoded frame checked against it")
struct LyingTableRangeCommandTests {
    /// 8 MiB of text in 128 frames of 64 KiB that declare their content
    /// size, with weir's seek table (checksums in its entries). Returns the content.
    static func manyFrames(_ scratch: Scratch) throws -> Data {
        let content = scratch.text("a", size: 8 << 20)
        let made = try WeirProcess.run(["-q", "-B", "64K", "a", "-o", "f.zst"], in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        return content
    }

    /// Adds `change` to field `field` (0: compressed size, 1: content size,
    /// 2: checksum) of entry `entry` of the seek table that ends `name`.
    static func change(_ name: String, entry: Int, field: Int, by change: Int64, in scratch: Scratch) throws {
        var bytes = [UInt8](try #require(scratch.data(name)))
        func u32(_ at: Int) -> UInt32 { (0 ..< 4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * $1) } }
        let count = Int(u32(bytes.count - 9)), entrySize = bytes[bytes.count - 5] & 0x80 != 0 ? 12 : 8
        try #require(u32(bytes.count - 4) == 0x8F92_EAB1 && entry < count && field * 4 < entrySize)
        let at = bytes.count - 9 - (count - entry) * entrySize + 4 * field
        let value = UInt32(truncatingIfNeeded: Int64(u32(at)) + change)
        for k in 0 ..< 4 { bytes[at + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(k))) }
        try Data(bytes).write(to: scratch.url.appendingPathComponent(name))
    }

    /// The `pread64` calls `command` makes, counted by strace.
    static func preads(_ command: String, in scratch: Scratch) throws -> Int {
        let run = try WeirProcess.shell(
            "strace -f -qq -e trace=pread64 -o preads.log \(command) > /dev/null && grep -c 'pread64(' preads.log",
            in: scratch.url)
        #expect(run.status == 0, "\(command): \(run.stderr)")
        return Int(String(decoding: run.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test("""
          a range of a file of 128 frames reads the footer, the table and the frames it touches: a few preads, \
          not one per frame; one member of a tar of 130 frames likewise
          """)
    func opensWithoutReadingEveryHeader() throws {
        let scratch = Scratch()
        let content = try Self.manyFrames(scratch)
        let range = try WeirProcess.run(["-d", "--range=5000000:+1000", "f.zst"], in: scratch.url)
        #expect(range.status == 0 && range.stdout == content[5_000_000 ..< 5_001_000], "\(range.stderr)")
        // Before issue 71, opening read 22 bytes at every frame: 129 preads and more.
        let counted = try Self.preads("$WEIR -d --range=5000000:+1000 f.zst", in: scratch)
        #expect(counted > 0 && counted <= 8, "\(counted) preads")

        try MemberIndexCommandTests.makeTree(scratch, short: true)
        scratch.text("tree/large", size: 8 << 20, seed: 5)
        let made = try WeirProcess.shell("tar --sort=name -cf t.tar tree && $WEIR -q -B 64K t.tar", in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        let member = try WeirProcess.run(["-dc", "--member=tree/sub/b", "t.tar.zst"], in: scratch.url)
        #expect(member.status == 0 && member.stdout.prefix(100).range(of: Data("tree/sub/b".utf8)) != nil,
                "\(member.stderr)")
        let memberReads = try Self.preads("$WEIR -dc --member=tree/sub/b t.tar.zst", in: scratch)
        #expect(memberReads > 0 && memberReads <= 12, "\(memberReads) preads")
    }

    @Test("""
          an entry whose content size the frame's header contradicts: a range that touches the frame is refused, \
          checked or not, naming the file, the frame and its offset, nothing written; -t fails, -dc is right
          """)
    func contentSizeLie() throws {
        let scratch = Scratch()
        let content = try Self.manyFrames(scratch)
        try Self.change("f.zst", entry: 3, field: 1, by: 1, in: scratch)
        let lie = "weir: f.zst: corrupt seek table: frame 3 at offset "
        for flags in [[], ["--no-check"]] {
            // Frame 3 alone, then from the start (frames before it may have gone out, as zstd's).
            for range in ["200000:+1000", "196608:+65536", "0:"] {
                let run = try WeirProcess.run(["-d"] + flags + ["--range=\(range)", "f.zst"], in: scratch.url)
                #expect(run.status == 1 && (range == "0:" || run.stdout.isEmpty),
                        "\(flags) \(range): \(run.stdout.count) bytes")
                #expect(run.stderr.contains(lie) && run.stderr.contains(
                    "declares 65536 bytes of content, but its seek table entry lists 65537"),
                        "\(flags) \(range): \(run.stderr)")
            }
        }
        // Frames before it are as the table says.
        let before = try WeirProcess.run(["-d", "--range=70000:+1000", "f.zst"], in: scratch.url)
        #expect(before.status == 0 && before.stdout == content[70_000 ..< 71_000], "\(before.stderr)")
        let test = try WeirProcess.run(["-t", "f.zst"], in: scratch.url)
        #expect(test.status == 1 && test.stderr.contains("entry 3 lists 65537 bytes"), "\(test.stderr)")
        // -l reads every header: it says the table is wrong.
        let list = try WeirProcess.run(["-l", "f.zst"], in: scratch.url)
        #expect(list.stderr.contains("seek table does not match the frames"), "\(list.stderr)")
        let whole = try WeirProcess.run(["-dc", "f.zst"], in: scratch.url)
        #expect(whole.stdout == content, "\(whole.stderr)")
    }

    @Test("""
          an entry whose checksum is not the one its frame stores: a range that touches the frame is refused, \
          nothing written; --no-check checks neither checksum; a range elsewhere reads right
          """)
    func checksumLie() throws {
        let scratch = Scratch()
        let content = try Self.manyFrames(scratch)
        try Self.change("f.zst", entry: 5, field: 2, by: 1, in: scratch)
        for range in ["340000:+1000", "327680:+65536", "0:"] {
            let run = try WeirProcess.run(["-d", "--range=\(range)", "f.zst"], in: scratch.url)
            #expect(run.status == 1 && (range == "0:" || run.stdout.isEmpty), "\(range): \(run.stdout.count) bytes")
            #expect(run.stderr.contains("weir: f.zst: corrupt seek table: frame 5 at offset ")
                        && run.stderr.contains("ends with the checksum 0x") && run.stderr.contains(
                            "but its seek table entry lists 0x"), "\(range): \(run.stderr)")
        }
        let unchecked = try WeirProcess.run(["-d", "--no-check", "--range=340000:+1000", "f.zst"], in: scratch.url)
        #expect(unchecked.status == 0 && unchecked.stdout == content[340_000 ..< 341_000], "\(unchecked.stderr)")
        let elsewhere = try WeirProcess.run(["-d", "--range=400000:+1000", "f.zst"], in: scratch.url)
        #expect(elsewhere.status == 0 && elsewhere.stdout == content[400_000 ..< 401_000], "\(elsewhere.stderr)")
        #expect(try WeirProcess.run(["-t", "f.zst"], in: scratch.url).status == 1)
    }

    @Test("""
          an entry whose compressed size is 7 bytes off, the next one 7 the other way: a range that touches either \
          frame is refused, nothing written (unchecked, the first frame is left before its end: its bytes are right)
          """)
    func compressedSizeLie() throws {
        let scratch = Scratch()
        _ = try Self.manyFrames(scratch)
        try Self.change("f.zst", entry: 3, field: 0, by: 7, in: scratch)
        try Self.change("f.zst", entry: 4, field: 0, by: -7, in: scratch)
        for (flags, ranges) in [([], ["200000:+1000", "270000:+1000"]), (["--no-check"], ["270000:+1000"])] {
            for range in ranges {
                let run = try WeirProcess.run(["-d"] + flags + ["--range=\(range)", "f.zst"], in: scratch.url)
                #expect(run.status == 1 && run.stdout.isEmpty && run.stderr.hasPrefix("weir: f.zst: "),
                        "\(flags) \(range): \(run.stdout.count) bytes, \(run.stderr)")
            }
        }
        let late = try WeirProcess.run(["-d", "--range=270000:+1000", "f.zst"], in: scratch.url)
        #expect(late.stderr.contains("frame 4 at offset ")
                    && late.stderr.contains("does not start with a zstd frame header"), "\(late.stderr)")
    }

    @Test("""
          --member of a tar whose table lies about the frame that holds the member, or about the content size of \
          a frame before it: refused, nothing written
          """)
    func memberUnderLyingTable() throws {
        let scratch = Scratch()
        try MemberIndexCommandTests.makeTree(scratch, short: true)
        let made = try WeirProcess.shell("tar --sort=name -cf t.tar tree && $WEIR -q -B 64K t.tar", in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        let tar = try #require(scratch.data("t.tar"))
        // tree/sub/mid: its header is in the tar after tree/big's 300,000 bytes, in frame 4 or later.
        let listed = try WeirProcess.shell("tar -tvf t.tar --block-number | grep tree/sub/mid", in: scratch.url)
        let block = String(decoding: listed.stdout, as: UTF8.self).split(separator: ":").first
            .flatMap { Int($0.replacingOccurrences(of: "block", with: "").trimmingCharacters(in: .whitespaces)) }
        let header = try #require(block, "\(listed.stdout)") * 512
        let frame = header / 65_536
        #expect(frame >= 2 && tar.count > header)
        for (entry, field, change) in [(frame, 2, Int64(1)), (frame, 1, 1), (0, 1, 512), (1, 1, -512)] {
            try Data(try #require(scratch.data("t.tar.zst"))).write(to: scratch.url.appendingPathComponent("l.zst"))
            try Self.change("l.zst", entry: entry, field: field, by: change, in: scratch)
            let run = try WeirProcess.run(["-dc", "--member=tree/sub/mid", "l.zst"], in: scratch.url)
            #expect(run.status == 1 && run.stdout.isEmpty && run.stderr.hasPrefix("weir: l.zst: "),
                    "entry \(entry) field \(field): exit \(run.status), \(run.stdout.count) bytes, \(run.stderr)")
        }
    }
}
