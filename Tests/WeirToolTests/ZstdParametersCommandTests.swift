import Foundation
import Testing

/// libzstd's parameters from the command line as zstd takes them:
/// `--zstd=`, `--[no-]compress-literals`, `--[no-]row-match-finder`,
/// `--target-compressed-block-size`, `--show-default-cparams`, the `--zstd=`
/// line of `-vv`; and what zstd prints of a file with `-lv`.
@Suite("weir --zstd= and the parameters zstd shows, against zstd")
struct ZstdParametersCommandTests {
    @Test("--zstd= in long and short names round-trips through the real zstd, and changes the output")
    func roundTrip() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 600_000)
        var sizes: Set<Int> = []
        for list in ["", "--zstd=mml=3,tlen=48,strat=6", "--zstd=strat=6,wlog=23,clog=23,hlog=22,slog=6",
                     "--zstd=windowLog=23,chainLog=23,hashLog=22,searchLog=6,minMatch=3,targetLength=48,strategy=6",
                     "--zstd=wlog=18,ovlog=9"] {
            let run = try WeirProcess.run(
                ["-q", "-f", "a", "-o", "a.zst"] + (list.isEmpty ? [] : [list]), in: scratch.url)
            #expect(run.status == 0, "\(list): \(run.stderr)")
            #expect(try scratch.zstd(["-dc", "a.zst"]).stdout == original, "\(list)")
            sizes.insert(scratch.data("a.zst")?.count ?? 0)
        }
        #expect(sizes.count >= 3, "the parameters change the frames: \(sizes)")
        let ldm = try WeirProcess.run(
            [
                "-q", "-f", "--single-thread", "--long", "--zstd=lhlog=20,lmml=64,lblog=1,lhrlog=7",
                "a", "-o", "l.zst",
            ], in: scratch.url)
        #expect(ldm.status == 0, "\(ldm.stderr)")
        #expect(try scratch.zstd(["-dc", "l.zst"]).stdout == original)
    }

    @Test("--zstd=ovlog=N is taken and changes nothing: weir's frames do not overlap")
    func overlapLogIgnored() throws {
        let scratch = Scratch()
        scratch.text("a", size: 3_000_000)
        var outputs: [Data] = []
        for list in ["--zstd=wlog=20", "--zstd=wlog=20,ovlog=9", "--zstd=overlapLog=1,wlog=20"] {
            let run = try WeirProcess.run(["-q", "-f", "-T2", "-B1M", "a", "-o", "a.zst", list], in: scratch.url)
            #expect(run.status == 0, "\(list): \(run.stderr)")
            outputs.append(try #require(scratch.data("a.zst")))
        }
        #expect(Set(outputs).count == 1, "\(outputs.map(\.count))")
    }

    @Test("a --zstd= list zstd refuses is refused (exit 1, no output)",
          arguments: ["--zstd=windowLog=21,", "--zstd=windowLo=21", "--zstd=windowLog=21,slog", "--zstd=strategy=10",
                      "--zstd=wlog=99"])
    func refused(list: String) throws {
        let scratch = Scratch()
        scratch.text("a", size: 1000)
        let ours = try WeirProcess.run([list, "a", "-o", "a.zst"], in: scratch.url)
        let theirs = try scratch.zstd([list, "a", "-o", "z.zst"])
        #expect(ours.status == 1, "\(ours.stderr)")
        #expect(theirs.status != 0)
        #expect(!scratch.exists("a.zst"))
    }

    @Test("--show-default-cparams prints zstd's block; -vv prints the --zstd= line zstd prints; both refused with -d")
    func shown() throws {
        let scratch = Scratch()
        scratch.text("a", size: 300_000)
        let ours = try WeirProcess.run(["--show-default-cparams", "-19", "-f", "a"], in: scratch.url)
        let theirs = try scratch.zstd(["--show-default-cparams", "-19", "-f", "a", "-o", "z.zst"])
        #expect(ours.status == 0)
        let block = theirs.stderr.split(separator: "\n").filter { $0.hasPrefix(" - ") || $0.hasPrefix("a (") }
        #expect(block.count == 8)
        #expect(ours.stderr.split(separator: "\n").filter { $0.hasPrefix(" - ") || $0.hasPrefix("a (") } == block,
                "\(ours.stderr)")
        let verbose = try WeirProcess.run(["-vv", "-f", "--zstd=clog=12", "a"], in: scratch.url)
        let stock = try scratch.zstd(["-vv", "-f", "--zstd=clog=12", "a", "-o", "z.zst"])
        let line = try #require(stock.stderr.split(separator: "\n").first { $0.hasPrefix("--zstd=") })
        #expect(verbose.stderr.split(separator: "\n").contains(line), "\(verbose.stderr)")
        // --long=N asks for its window in the line too, as zstd's.
        let long = try WeirProcess.run(["-vv", "-f", "--long=24", "a"], in: scratch.url)
        let stockLong = try scratch.zstd(["-vv", "-f", "--long=24", "a", "-o", "z.zst"])
        let longLine = try #require(stockLong.stderr.split(separator: "\n").first { $0.hasPrefix("--zstd=wlog=24,") })
        #expect(long.stderr.split(separator: "\n").contains(longLine), "\(long.stderr)")
        let decompressing = try WeirProcess.run(["--show-default-cparams", "-d", "a.zst"], in: scratch.url)
        #expect(decompressing.status == 1)
    }

    @Test("--no-compress-literals and --compress-literals make frames zstd decodes, of different sizes")
    func literals() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 200_000)
        var sizes: [Int] = []
        for flag in ["--no-compress-literals", "--compress-literals"] {
            let run = try WeirProcess.run(["-q", "-f", "-1", flag, "a", "-o", "a.zst"], in: scratch.url)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try scratch.zstd(["-dc", "a.zst"]).stdout == original)
            sizes.append(scratch.data("a.zst")?.count ?? 0)
        }
        #expect(sizes[0] > sizes[1], "\(sizes)")
    }

    @Test("decompressing, --zstd=wlog=N is a memory limit of 2^N, as in zstd")
    func windowLimit() throws {
        let scratch = Scratch()
        scratch.text("a", size: 3_000_000)
        try scratch.zstd(["-q", "--long=22", "a", "-o", "a.zst"])
        let small = try WeirProcess.run(["-t", "--zstd=wlog=21", "a.zst"], in: scratch.url)
        #expect(small.status == 1, "\(small.stderr)")
        let enough = try WeirProcess.run(["-t", "--zstd=wlog=22", "a.zst"], in: scratch.url)
        #expect(enough.status == 0, "\(enough.stderr)")
        #expect(try scratch.zstd(["-t", "--zstd=wlog=21", "a.zst"]).status != 0)
    }

    @Test("-lv prints zstd's block for a file: the lines zstd prints, then weir's frames",
          arguments: [[], ["--no-content-size"], ["--no-check"]])
    func verboseList(flags: [String]) throws {
        let scratch = Scratch()
        scratch.text("a", size: 300_000)
        try scratch.zstd(["-q"] + flags + ["a", "-o", "a.zst"])
        let ours = String(decoding: try WeirProcess.run(["-lv", "a.zst"], in: scratch.url).stdout, as: UTF8.self)
        let theirs = String(decoding: try scratch.zstd(["-lv", "a.zst"]).stdout, as: UTF8.self)
        let block = theirs.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
        #expect(block.count >= 6)
        #expect(
            Array(ours.split(separator: "\n", omittingEmptySubsequences: false).prefix(block.count)) == Array(block),
            "\(ours)\n---\n\(theirs)")
    }

    @Test("--[no-]row-match-finder and --target-compressed-block-size: in one frame, the bytes zstd writes with them",
          arguments: ["--row-match-finder", "--no-row-match-finder", "--target-compressed-block-size=1024"])
    func sameBytesAsZstd(flag: String) throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 1_000_000)
        let ours = try WeirProcess.run(["-q", "-T1", "-7", flag, "a", "-o", "a.zst"], in: scratch.url)
        #expect(ours.status == 0, "\(ours.stderr)")
        try scratch.zstd(["-q", "-7", flag, "a", "-o", "z.zst"])
        #expect(scratch.data("a.zst") != nil && scratch.data("a.zst") == scratch.data("z.zst"), "\(flag)")
        #expect(try scratch.zstd(["-dc", "a.zst"]).stdout == original)
    }

    @Test("--no-row-match-finder changes a lazy level's frames; --target-compressed-block-size makes smaller blocks")
    func parametersChangeFrames() throws {
        let scratch = Scratch()
        let original = scratch.text("a", size: 1_000_000)
        func compressed(_ flags: [String]) throws -> Data {
            let run = try WeirProcess.run(["-q", "-f", "-7"] + flags + ["a", "-o", "a.zst"], in: scratch.url)
            #expect(run.status == 0, "\(flags): \(run.stderr)")
            #expect(try scratch.zstd(["-dc", "a.zst"]).stdout == original, "\(flags)")
            return scratch.data("a.zst") ?? Data()
        }
        #expect(try compressed(["--row-match-finder"]) != compressed(["--no-row-match-finder"]))
        let full = Self.blockSizes(try compressed(["-T1"]))
        let small = Self.blockSizes(try compressed(["-T1", "--target-compressed-block-size=1K"]))
        #expect(full.count >= 7 && small.count > 4 * full.count, "\(full.count) blocks, then \(small.count)")
        #expect((small.max() ?? .max) < (full.max() ?? 0) / 4, "\(small.max() ?? 0) against \(full.max() ?? 0)")
        // Out of libzstd's bounds (64 to 128K), as in zstd: refused, nothing written.
        for size in ["10", "63", "129K"] {
            let flag = "--target-compressed-block-size=\(size)"
            let refused = try WeirProcess.run([flag, "a", "-o", "b.zst"], in: scratch.url)
            #expect(refused.status == 1 && refused.stderr.contains("--target-compressed-block-size"),
                    "\(refused.stderr)")
            #expect(try scratch.zstd([flag, "a", "-o", "z.zst"]).status != 0, "\(size)")
            #expect(!scratch.exists("b.zst"), "\(size)")
        }
        let edges = try WeirProcess.run(["-q", "-f", "--target-compressed-block-size=64", "a", "-o", "b.zst"],
                                        in: scratch.url)
        #expect(edges.status == 0, "\(edges.stderr)")
        let top = try WeirProcess.run(["-q", "-f", "--target-compressed-block-size=128K", "a", "-o", "b.zst"],
                                      in: scratch.url)
        #expect(top.status == 0, "\(top.stderr)")
    }

    @Test("-lv's Window Size line is zstd's for the same file: weir's frames, zstd's stream from a pipe, --long")
    func windowSizeLine() throws {
        let scratch = Scratch()
        scratch.text("a", size: 3_000_000)
        try #require(try WeirProcess.run(["-q", "a", "-o", "frames.zst"], in: scratch.url).status == 0)
        try #require(try WeirProcess.run(["-q", "-T1", "--long=24", "--no-content-size", "a", "-o", "long.zst"],
                                         in: scratch.url).status == 0)
        try scratch.zstd(["-q", "-19", "-o", "piped.zst"], stdin: "a")
        try scratch.zstd(["-q", "--long=24", "a", "-o", "zlong.zst"])
        var windows: Set<String> = []
        for file in ["frames.zst", "long.zst", "piped.zst", "zlong.zst"] {
            func window(_ run: WeirProcess.Result) -> String? {
                String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").first {
                    $0.hasPrefix("Window Size: ")
                }
                    .map(String.init)
            }
            let ours = window(try WeirProcess.run(["-lv", file], in: scratch.url))
            let theirs = window(try scratch.zstd(["-lv", file]))
            #expect(ours != nil && ours == theirs, "\(file): \(ours ?? "none")")
            windows.insert(ours ?? "")
        }
        #expect(windows.contains("Window Size: 8.00 MiB (8388608 B)"), "zstd -19 from a pipe: \(windows)")
        #expect(windows.count >= 3)
    }

    /// The compressed sizes of the blocks of the zstd frame `data` starts
    /// with (RFC 8878: the frame header, then blocks after 3-byte headers;
    /// an RLE block stores one byte).
    static func blockSizes(_ data: Data) -> [Int] {
        let bytes = [UInt8](data)
        guard bytes.count > 5, Array(bytes[0 ..< 4]) == [0x28, 0xB5, 0x2F, 0xFD] else { return [] }
        let descriptor = bytes[4]
        let singleSegment = descriptor & 0x20 != 0
        let dictionaryIDSize = [0, 1, 2, 4][Int(descriptor & 3)]
        let contentSizeSize = [singleSegment ? 1 : 0, 2, 4, 8][Int(descriptor >> 6)]
        var offset = 5 + (singleSegment ? 0 : 1) + dictionaryIDSize + contentSizeSize
        var sizes: [Int] = []
        while offset + 3 <= bytes.count {
            let header = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16
            let stored = (header >> 1) & 3 == 1 ? 1 : header >> 3
            sizes.append(stored)
            offset += 3 + stored
            if header & 1 != 0 { break }
        }
        return sizes
    }

    @Test("a small input makes one frame and no seek table: the bytes zstd writes, from a file or standard input")
    func oneFrame() throws {
        let scratch = Scratch()
        for size in [0, 1, 5000, 100_000] {
            scratch.text("a", size: size)
            let ours = try WeirProcess.run(["-c", "a"], in: scratch.url)
            let theirs = try scratch.zstd(["-c", "a"])
            #expect(ours.stdout == theirs.stdout, "\(size) bytes")
            // zstd never asks standard input's size: its frame declares none,
            // with the level's window; weir's frame is the same (zstd's
            // multi-threaded default uses --size-hint otherwise).
            for flags in [["-3"], ["-19"], ["--long=24"], ["-14", "--size-hint=11000"]] {
                let redirected = try WeirProcess.run(["-c"] + flags, in: scratch.url, stdin: "a")
                let stock = try scratch.zstd(["-c", "--single-thread"] + flags, stdin: "a")
                #expect(redirected.stdout == stock.stdout, "\(size) \(flags)")
            }
        }
        let piped = try WeirProcess.shell("cat a | $WEIR -19 > w.zst && cat a | zstd -19 > z.zst && cmp w.zst z.zst",
                                          in: scratch.url)
        #expect(piped.status == 0, "\(piped.stderr)")
        let listed = String(decoding: try scratch.zstd(["-lv", "w.zst"]).stdout, as: UTF8.self)
        #expect(
            listed.contains("Window Size: 8.00 MiB (8388608 B)") && !listed.contains("Decompressed Size"), "\(listed)")
        // Several frames from standard input still declare their sizes (parallel decoding needs them).
        scratch.text("b", size: 3_000_000)
        try #require(try WeirProcess.run(["-q", "-B1M", "-o", "b.zst"], in: scratch.url, stdin: "b").status == 0)
        let frames = String(decoding: try WeirProcess.run(["-lv", "b.zst"], in: scratch.url).stdout, as: UTF8.self)
        #expect(frames.contains("# Zstandard Frames: 3") && frames.contains("Decompressed Size: 2.86 MiB (3000000 B)"),
                "\(frames)")
    }

    @Test("-vv -l shows the block's sizes in bytes, as zstd -vv -l")
    func exactSizes() throws {
        let scratch = Scratch()
        scratch.text("a", size: 65_537)
        try scratch.zstd(["-q", "-19", "-o", "a.zst"], stdin: "a")
        let ours = String(decoding: try WeirProcess.run(["-vv", "-l", "a.zst"], in: scratch.url).stdout, as: UTF8.self)
        let theirs = String(decoding: try scratch.zstd(["-vv", "-l", "a.zst"]).stdout, as: UTF8.self)
        let block = theirs.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
        #expect(block.contains("Window Size: 8388608 B (8388608 B)"), "\(theirs)")
        #expect(
            Array(ours.split(separator: "\n", omittingEmptySubsequences: false).prefix(block.count)) == Array(block),
            "\(ours)")
    }
}
