import Foundation
import Testing

/// libzstd's parameters from the command line as zstd takes them:
/// `--zstd=`, `--[no-]compress-literals`, `--show-default-cparams`, the
/// `--zstd=` line of `-vv`; and what zstd prints of a file with `-lv`.
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
            let run = try WeirProcess.run(["-q", "-f", "a", "-o", "a.zst"] + (list.isEmpty ? [] : [list]), in: scratch.url)
            #expect(run.status == 0, "\(list): \(run.stderr)")
            #expect(try scratch.zstd(["-dc", "a.zst"]).stdout == original, "\(list)")
            sizes.insert(scratch.data("a.zst")?.count ?? 0)
        }
        #expect(sizes.count >= 3, "the parameters change the frames: \(sizes)")
        let ldm = try WeirProcess.run(["-q", "-f", "--single-thread", "--long", "--zstd=lhlog=20,lmml=64,lblog=1,lhrlog=7",
                                       "a", "-o", "l.zst"], in: scratch.url)
        #expect(ldm.status == 0, "\(ldm.stderr)")
        #expect(try scratch.zstd(["-dc", "l.zst"]).stdout == original)
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
        #expect(Array(ours.split(separator: "\n", omittingEmptySubsequences: false).prefix(block.count)) == Array(block),
                "\(ours)\n---\n\(theirs)")
    }

    @Test("a small input makes one frame and no seek table: the bytes zstd writes")
    func oneFrame() throws {
        let scratch = Scratch()
        for size in [0, 1, 5000] {
            scratch.text("a", size: size)
            let ours = try WeirProcess.run(["-c", "a"], in: scratch.url)
            let theirs = try scratch.zstd(["-c", "a"])
            #expect(ours.stdout == theirs.stdout, "\(size) bytes")
        }
    }
}
