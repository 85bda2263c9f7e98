import Foundation
import Testing

@Suite("weir -l, weir -t, seek tables and parallel decompression from the command line")
struct ListAndTestCommandTests {
    @Test("-l prints what zstd -l prints, for weir, zstd, pzstd and concatenated files")
    func listMatchesZstd() throws {
        let scratch = Scratch()
        scratch.text("a", size: 3_000_000, seed: 3)
        try WeirProcess.run(["-q", "--chunk-size", "256KiB", "a", "-o", "a.weir.zst"], in: scratch.url)
        try WeirProcess.run(["-q", "--no-seek-table", "--no-check", "a", "-o", "a.bare.zst"], in: scratch.url)
        try scratch.zstd(["-q", "a", "-o", "a.zstd.zst"])
        _ = try WeirProcess.run(["-q", "-p", "2", "a", "-o", "a.pz.zst"], in: scratch.url, executable: "/usr/bin/pzstd")
        try WeirProcess.shell("cat a.weir.zst a.pz.zst a.zstd.zst > a.cat.zst", in: scratch.url)
        let files = ["a.weir.zst", "a.bare.zst", "a.zstd.zst", "a.pz.zst", "a.cat.zst"]
        for arguments in files.map({ [$0] }) + [files] {
            let ours = try WeirProcess.run(["-l"] + arguments, in: scratch.url)
            let theirs = try scratch.zstd(["-l"] + arguments)
            #expect(ours.status == 0)
            #expect(String(decoding: ours.stdout, as: UTF8.self) == String(decoding: theirs.stdout, as: UTF8.self),
                    "\(arguments)")
        }
        let verbose = try WeirProcess.run(["-lv", "a.weir.zst"], in: scratch.url)
        let text = String(decoding: verbose.stdout, as: UTF8.self)
        #expect(text.contains("(from the seek table)"))
        #expect(text.contains("seek table"))
        // zstd's block (name, frames, skippable frames, dictionary, window,
        // sizes, ratio, check: 9 lines), weir's frame header, 12 frames, the table.
        #expect(text.split(separator: "\n").count == 9 + 1 + 12 + 1, "\(text)")
        #expect(text.hasPrefix("a.weir.zst \n# Zstandard Frames: 12\n# Skippable Frames: 1\nDictID: 0\n"), "\(text)")

        let stdin = try WeirProcess.run(["-l"], in: scratch.url, stdin: "a.weir.zst")
        #expect(stdin.status == 1)
        #expect(stdin.stderr.contains("does not support reading from standard input"))
        let missing = try WeirProcess.run(["-l", "nope.zst", "a.zstd.zst"], in: scratch.url)
        #expect(missing.status == 1)
        #expect(String(decoding: missing.stdout, as: UTF8.self).contains("a.zstd.zst"))
    }

    @Test("a large file with a seek table is listed from its table, without reading the body")
    func listReadsOnlyTheTable() throws {
        let scratch = Scratch()
        scratch.text("a", size: 2_000_000, seed: 4)
        try WeirProcess.run(["-q", "--chunk-size", "1MiB", "a", "-o", "a.zst"], in: scratch.url)
        // Overwrite the middle third of frame 0, block headers included, but
        // not its header nor its checksum (-l checks those against the table).
        let rows = String(decoding: try WeirProcess.run(["-lv", "a.zst"], in: scratch.url).stdout, as: UTF8.self)
        let first = try #require(rows.split(separator: "\n").first { $0.hasPrefix("      0 ") })
        let size = try #require(Int(first.split(separator: " ")[2]))
        let original = try #require(scratch.data("a.zst"))
        var damaged = original
        damaged.replaceSubrange(size / 3 ..< 2 * size / 3, with: Data(repeating: 0x33, count: 2 * size / 3 - size / 3))
        _ = FileManager.default.createFile(atPath: scratch.path("a.zst"), contents: damaged)
        // Without its table the file must be scanned, and the scan fails on the damage.
        let tableSize = 8 + 2 * 12 + 9
        _ = FileManager.default.createFile(atPath: scratch.path("bare.zst"), contents: damaged.dropLast(tableSize))
        let scanned = try WeirProcess.run(["-l", "bare.zst"], in: scratch.url)
        #expect(scanned.status == 1)
        _ = FileManager.default.createFile(atPath: scratch.path("intact.zst"), contents: original.dropLast(tableSize))
        #expect(try WeirProcess.run(["-l", "intact.zst"], in: scratch.url).status == 0)
        let listed = try WeirProcess.run(["-l", "a.zst"], in: scratch.url)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stderr.isEmpty)
        #expect(String(decoding: listed.stdout, as: UTF8.self).contains("1.91 MiB"))
        // -t reads everything, and finds the damage.
        let tested = try WeirProcess.run(["-t", "a.zst"], in: scratch.url)
        #expect(tested.status == 1)
        #expect(tested.stderr.contains("frame"))
    }

    @Test("-t passes good files and fails damaged ones, writing nothing")
    func testOperation() throws {
        let scratch = Scratch()
        scratch.text("a", size: 1_500_000, seed: 5)
        try WeirProcess.run(["-q", "--chunk-size", "100KiB", "a", "-o", "good.zst"], in: scratch.url)
        try scratch.zstd(["-q", "-T2", "a", "-o", "single.zst"])
        var damaged = try #require(scratch.data("good.zst"))
        damaged[damaged.count / 2] ^= 0x40
        _ = FileManager.default.createFile(atPath: scratch.path("bad.zst"), contents: damaged)
        let truncated = try #require(scratch.data("good.zst")).prefix(700_000)
        _ = FileManager.default.createFile(atPath: scratch.path("cut.zst"), contents: Data(truncated))
        let before = scratch.names

        let good = try WeirProcess.run(["-t", "good.zst", "single.zst"], in: scratch.url)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.isEmpty)
        let bad = try WeirProcess.run(["-t", "bad.zst", "good.zst", "cut.zst"], in: scratch.url)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("bad.zst:"))
        #expect(bad.stderr.contains("cut.zst:"))
        #expect(bad.stderr.contains("good.zst: OK"))
        #expect(scratch.names == before)
        let piped = try WeirProcess.shell("cat bad.zst | $WEIR -t", in: scratch.url)
        #expect(piped.status == 1)
    }

    /// `bytes` (a weir file) with one field of its seek table changed: the
    /// table is a skippable frame (magic 0x184D2A5E, size) of 12-byte entries
    /// (compressed size, decompressed size, checksum), then a 9-byte footer
    /// (frame count, descriptor, magic 0x8F92EAB1).
    static func damagingTable(_ bytes: Data, entry: Int, field: Int, by delta: Int) -> Data {
        var bytes = [UInt8](bytes)
        func u32(_ at: Int) -> UInt32 { (0 ..< 4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * $1) } }
        func put(_ at: Int, _ value: UInt32) {
            for index in 0..<4 { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        }
        let footer = bytes.count - 9
        precondition(u32(footer + 5) == 0x8F92_EAB1 && bytes[footer + 4] == 0x80)
        let at = entry < 0 ? footer : footer - Int(u32(footer)) * 12 + entry * 12 + field * 4
        put(at, UInt32(truncatingIfNeeded: Int(u32(at)) + delta))
        return Data(bytes)
    }

    @Test("a damaged seek table: -d warns once and decodes by scanning, -t fails naming the entry, -l scans")
    func damagedSeekTable() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 600_000, seed: 8)
        try WeirProcess.run(["-q", "--chunk-size", "100K", "a", "-o", "good.zst"], in: scratch.url)
        let good = try #require(scratch.data("good.zst"))
        let cases: [(name: String, entry: Int, field: Int, delta: Int, detail: String)] = [
            ("csize", 2, 0, -1, "entry 2 lists a compressed size of "),
            ("dsize", 2, 1, 1, "entry 2 lists 102401 bytes of content, but frame 2 at offset "),
            ("checksum", 3, 2, 1, "entry 3 lists the checksum 0x"),
            ("count", -1, 0, 1, "the seek table of 7 frames should begin at offset "),
        ]
        let warning = "warning: seek table does not match the frames; ignoring it ("
        for damage in cases {
            let file = "\(damage.name).zst"
            let bytes = Self.damagingTable(good, entry: damage.entry, field: damage.field, by: damage.delta)
            _ = FileManager.default.createFile(atPath: scratch.path(file), contents: bytes)

            let decoded = try WeirProcess.run(["-d", file, "-o", "\(damage.name).out"], in: scratch.url)
            #expect(decoded.status == 0, "\(file): \(decoded.stderr)")
            #expect(scratch.data("\(damage.name).out") == original, "\(file)")
            #expect(decoded.stderr.components(separatedBy: "weir: \(file): \(warning)").count == 2, "\(decoded.stderr)")
            #expect(decoded.stderr.contains(damage.detail), "\(decoded.stderr)")

            let tested = try WeirProcess.run(["-t", file], in: scratch.url)
            #expect(tested.status == 1, "\(file): \(tested.stderr)")
            #expect(tested.stderr.contains("weir: \(file): corrupt seek table: \(damage.detail)"), "\(tested.stderr)")

            let listed = try WeirProcess.run(["-l", file], in: scratch.url)
            #expect(listed.status == 0, "\(file): \(listed.stderr)")
            #expect(listed.stderr.hasPrefix("weir: \(file): \(warning)\(damage.detail)"), "\(listed.stderr)")
            #expect(listed.stdout == (try scratch.zstd(["-l", file])).stdout, "\(file): the listing is the frames'")

            // -q keeps the warning, -qq hides it; stdin from the file is checked too.
            let quiet = try WeirProcess.shell(
                "$WEIR -q -dc < \(file) | cmp - a && $WEIR -qq -dc \(file) | cmp - a && echo same",
                in: scratch.url)
            #expect(String(decoding: quiet.stdout, as: UTF8.self) == "same\n")
            #expect(quiet.stderr.hasPrefix("weir: (stdin): \(warning)"), "\(quiet.stderr)")
            #expect(quiet.stderr.split(separator: "\n").count == 1, "\(quiet.stderr)")
            // --json keeps stderr JSON: the warning goes into the object.
            let json = try WeirProcess.run(["--json", "-dc", file], in: scratch.url)
            #expect(json.status == 0)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stderr.utf8)) as? [String: Any],
                                      "\(json.stderr)")
            let warnings = try #require(object["warnings"] as? [String])
            #expect(warnings.count == 1 && warnings[0].hasPrefix(String(warning.dropFirst("warning: ".count))))
            #expect(warnings[0].contains(damage.detail))
        }
        // The intact file: no warning anywhere, and no "warnings" key.
        let intact = try WeirProcess.run(["-q", "-t", "good.zst"], in: scratch.url)
        #expect(intact.status == 0 && intact.stderr.isEmpty, "\(intact.stderr)")
        let listed = try WeirProcess.run(["-l", "good.zst"], in: scratch.url)
        #expect(listed.status == 0 && listed.stderr.isEmpty, "\(listed.stderr)")
        let json = try WeirProcess.run(["--json", "-t", "good.zst"], in: scratch.url)
        #expect(!json.stderr.contains("warnings"), "\(json.stderr)")
    }

    @Test("-l and -lv say plainly which sizes only the seek table gives, unchecked; -t checks them (issue 59)")
    func tableOnlySizesSaid() throws {
        let scratch = Scratch()
        _ = try RangeCommandTests.lyingTable(scratch, change: 1000)
        let note = "weir: s.zst: note: the content sizes of 2 frames come from the seek table alone (their headers "
            + "declare none) and are not checked by -l; weir -t decodes them to check\n"
        for flags in [["-l"], ["-lv"]] {
            let run = try WeirProcess.run(flags + ["s.zst"], in: scratch.url)
            #expect(run.status == 0 && run.stderr == note, "\(flags): \(run.stderr)")
        }
        #expect(try WeirProcess.run(["-q", "-l", "s.zst"], in: scratch.url).stderr.isEmpty)
        let test = try WeirProcess.run(["-t", "s.zst"], in: scratch.url)
        #expect(test.status == 1 && test.stderr.contains("corrupt seek table: entry 0 lists 2001000 bytes"),
                "\(test.stderr)")
        // Sizes that headers declare are checked: nothing to say.
        #expect(try WeirProcess.run(["-q", "a", "-o", "w.zst"], in: scratch.url).status == 0)
        let weir = try WeirProcess.run(["-l", "w.zst"], in: scratch.url)
        #expect(weir.status == 0 && weir.stderr.isEmpty, "\(weir.stderr)")
    }

    @Test("round trips through pipes and files with random sizes, chunk sizes and threads; zstd -d reads weir's files")
    func roundTrips() throws {
        let scratch = Scratch()
        var state: UInt64 = 99
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        for round in 0 ..< 6 {
            let size = [0, 10, 200_000, 2_500_000][round % 4] + next(3000)
            let original = scratch.text("in\(round)", size: size, seed: UInt64(round))
            let chunk = ["1KiB", "64KiB", "1MiB"][next(3)]
            let threads = "\(1 + next(4))"
            let compress = try WeirProcess.shell(
                "$WEIR -q -c -T\(threads) --chunk-size \(chunk) < in\(round) > c\(round).zst", in: scratch.url)
            #expect(compress.status == 0)
            let stock = try scratch.zstd(["-q", "-d", "-c", "c\(round).zst"])
            #expect(stock.stdout == original, "zstd -d, round \(round)")
            let piped = try WeirProcess.shell("cat c\(round).zst | $WEIR -d -T\(threads) | cat", in: scratch.url)
            #expect(piped.stdout == original, "pipe, round \(round)")
            let filed = try WeirProcess.run(
                ["-q", "-d", "-T", threads, "c\(round).zst", "-o", "out\(round)"], in: scratch.url)
            #expect(filed.status == 0)
            #expect(scratch.data("out\(round)") == original, "file, round \(round)")
        }
        let plain = try WeirProcess.run(["-q", "--no-seek-table", "in2", "-o", "bare.zst"], in: scratch.url)
        #expect(plain.status == 0)
        let list = try WeirProcess.run(["-l", "bare.zst"], in: scratch.url)
        #expect(String(decoding: list.stdout, as: UTF8.self).contains("     1      0  "))
    }
}
