import Foundation
import Testing

/// Seek tables whose entries no zstd frame could have (issue 67): a frame's
/// size bounds its content both ways, visible without decoding it, so a
/// table that breaks the bound is refused where it is read, with the file,
/// the entry, the frame and its offset — never content offsets shifted past it.
@Suite("seek table entries no frame could produce")
struct ImpossibleTableCommandTests {
    /// Writes `u.zst`: four zstd frames of 200,000 bytes of text each, none
    /// declaring its content size (as pyzstd's seekable files and streams
    /// are), and the seek table `weir --index` appends (which decodes them
    /// to measure them). Returns the content.
    static func unsized(_ scratch: Scratch) throws -> Data {
        var content = Data()
        for part in 0 ..< 4 {
            content += scratch.text("p\(part)", size: 200_000, seed: UInt64(part + 1))
        }
        let frames = try WeirProcess.shell(
            "for p in p0 p1 p2 p3; do zstd -q --no-content-size -c $p; done > u.zst && $WEIR -q --index u.zst",
            in: scratch.url)
        #expect(frames.status == 0, "\(frames.stderr)")
        return content
    }

    /// Sets entry `entry`'s decompressed size in the seek table that ends
    /// `name` (entries of 12 bytes, with checksums) to `size`.
    static func setContentSize(_ name: String, entry: Int, to size: UInt32, count: Int, in scratch: Scratch) throws {
        var bytes = try #require(scratch.data(name))
        let at = bytes.count - 9 - (count - entry) * 12 + 4
        for k in 0 ..< 4 { bytes[at + k] = UInt8(truncatingIfNeeded: size >> (8 * UInt32(k))) }
        try bytes.write(to: scratch.url.appendingPathComponent(name))
    }

    @Test("""
          an entry of no content (or too little) for a zstd frame of kilobytes: --range past it, -l and --index \
          refuse the table, naming the file, the entry, the frame and its offset; the untouched file reads right
          """,
          arguments: [UInt32(0), 100])
    func tooLittleContent(listed: UInt32) throws {
        let scratch = Scratch()
        let content = try Self.unsized(scratch)
        let control = try WeirProcess.run(["-d", "--range=450000:+1000", "u.zst"], in: scratch.url)
        #expect(control.status == 0 && control.stdout == content[450_000 ..< 451_000], "\(control.stderr)")
        try Self.setContentSize("u.zst", entry: 1, to: listed, count: 4, in: scratch)
        let range = try WeirProcess.run(["-d", "--range=450000:+1000", "u.zst"], in: scratch.url)
        #expect(range.status == 1 && range.stdout.isEmpty, "\(range.stderr)")
        #expect(range.stderr.contains("u.zst") && range.stderr.contains("seek table")
                    && range.stderr.contains("entry 1 lists ") && range.stderr.contains("frame 1 at offset "),
                "\(range.stderr)")
        let list = try WeirProcess.run(["-l", "u.zst"], in: scratch.url)
        #expect(list.status == 1 && list.stderr.contains("entry 1 lists "), "\(list.stderr)")
        // The whole file still decodes (frames are the truth); -t says the table is wrong.
        let whole = try WeirProcess.run(["-dc", "u.zst"], in: scratch.url)
        #expect(whole.stdout == content, "\(whole.stderr)")
        #expect(try WeirProcess.run(["-t", "u.zst"], in: scratch.url).status == 1)
    }

    @Test("an entry listing more content than its frame's size can hold: -l and --range refuse the table")
    func tooMuchContent() throws {
        let scratch = Scratch()
        let content = try Self.unsized(scratch)
        try Self.setContentSize("u.zst", entry: 2, to: 4_000_000_000, count: 4, in: scratch)
        let list = try WeirProcess.run(["-l", "u.zst"], in: scratch.url)
        #expect(list.status == 1 && list.stderr.contains("u.zst")
                    && list.stderr.contains("entry 2 lists 4000000000 bytes of content"), "\(list.stderr)")
        let range = try WeirProcess.run(["-d", "--range=10:+1000", "u.zst"], in: scratch.url)
        #expect(range.status == 1 && range.stderr.contains("entry 2 lists "), "\(range.stderr)")
        #expect(try WeirProcess.run(["-dc", "u.zst"], in: scratch.url).stdout == content)
    }

    @Test("skippable entries of no content pass: a tar's member index, a concatenation's tables and indexes")
    func skippableEntriesPass() throws {
        let scratch = Scratch()
        try MemberIndexCommandTests.makeTree(scratch, short: false)
        let make = "tar -cf a.tar tree && $WEIR -q -B 64K a.tar && cat a.tar.zst a.tar.zst > twice.zst"
            + " && $WEIR -q --index twice.zst"
        let made = try WeirProcess.shell(make, in: scratch.url)
        #expect(made.status == 0, "\(made.stderr)")
        let tar = try #require(scratch.data("a.tar"))
        for name in ["a.tar.zst", "twice.zst"] {
            let list = try WeirProcess.run(["-l", name], in: scratch.url)
            #expect(list.status == 0, "\(name): \(list.stderr)")
            let range = try WeirProcess.run(["-d", "--range=1000:+5000", name], in: scratch.url)
            #expect(range.status == 0 && range.stdout == tar[1000 ..< 6000], "\(name): \(range.stderr)")
        }
        let range = try WeirProcess.run(["-d", "--range=\(tar.count + 1000):+5000", "twice.zst"], in: scratch.url)
        #expect(range.status == 0 && range.stdout == tar[1000 ..< 6000], "\(range.stderr)")
    }
}
