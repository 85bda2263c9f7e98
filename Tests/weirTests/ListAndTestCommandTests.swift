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
        #expect(text.split(separator: "\n").count == 2 + 1 + 12 + 1)  // header, file, frame header, 12 frames, table

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
        try WeirProcess.run(["-q", "--chunk-size", "64KiB", "a", "-o", "a.zst"], in: scratch.url)
        // Overwrite the middle of the body: a listing that read it would fail.
        let handle = try #require(FileHandle(forUpdatingAtPath: scratch.path("a.zst")))
        try handle.seek(toOffset: 100_000)
        try handle.write(contentsOf: Data(repeating: 0x33, count: 50_000))
        try handle.close()
        let listed = try WeirProcess.run(["-l", "a.zst"], in: scratch.url)
        #expect(listed.status == 0)
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
            let filed = try WeirProcess.run(["-q", "-d", "-T", threads, "c\(round).zst", "-o", "out\(round)"], in: scratch.url)
            #expect(filed.status == 0)
            #expect(scratch.data("out\(round)") == original, "file, round \(round)")
        }
        let plain = try WeirProcess.run(["-q", "--no-seek-table", "in2", "-o", "bare.zst"], in: scratch.url)
        #expect(plain.status == 0)
        let list = try WeirProcess.run(["-l", "bare.zst"], in: scratch.url)
        #expect(String(decoding: list.stdout, as: UTF8.self).contains("     1      0  "))
    }
}
